/** The v1 SDK client, as VS Code runs it, through the real bridge to real upstream servers. */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectV1, MODERN_SERVER, RAW_SERVER } from "./helpers.ts";

async function connect(upstream: string[], options: string[] = []): Promise<Client> {
  return (await connectV1([...options, "--", ...upstream])).client;
}

// With `--protocol auto` a 2026-07-28 upstream gets the modern path, unchanged.
for (const options of [[], ["--protocol", "auto"]]) {
  Deno.test(`v1 client uses tools, prompts, resources, templates and completion through the bridge${options.length ? ` (${options.join(" ")})` : ""}`, () =>
    usesEverything(options));
}

async function usesEverything(options: string[]): Promise<void> {
  const client = await connect(MODERN_SERVER, options);
  try {
    deepStrictEqual(client.getServerVersion(), {
      name: "fixture-2026",
      version: "9.9.9",
      title: "Fixture",
    });
    strictEqual(client.getInstructions(), "fixture instructions");
    const caps = client.getServerCapabilities()!;
    ok(caps.tools && caps.prompts && caps.resources && caps.logging && caps.completions);
    strictEqual(caps.tasks, undefined);

    const tools = await client.listTools();
    deepStrictEqual(tools.tools.map((t: { name: string }) => t.name).sort(), [
      "add_tool",
      "big",
      "die",
      "echo",
      "fail",
      "flood",
      "log",
      "slow",
      "touch",
    ]);
    deepStrictEqual(await client.callTool({ name: "echo", arguments: { text: "hi" } }), {
      content: [{ type: "text", text: "hi" }],
    });
    const prompts = await client.listPrompts();
    deepStrictEqual(prompts.prompts.map((p: { name: string }) => p.name), ["greet"]);
    deepStrictEqual((await client.getPrompt({ name: "greet" })).messages, [
      { role: "user", content: { type: "text", text: "Hello." } },
    ]);
    deepStrictEqual((await client.listResources()).resources.map((r: { uri: string }) => r.uri), [
      "fixture://readme",
    ]);
    deepStrictEqual(await client.readResource({ uri: "fixture://readme" }), {
      contents: [{ uri: "fixture://readme", text: "readme text" }],
    });
    deepStrictEqual(
      (await client.listResourceTemplates()).resourceTemplates.map((t: { uriTemplate: string }) =>
        t.uriTemplate
      ),
      [
        "fixture://notes/{id}",
      ],
    );
    const completion = await client.complete({
      ref: { type: "ref/resource", uri: "fixture://notes/{id}" },
      argument: { name: "id", value: "1" },
    });
    deepStrictEqual(completion.completion.values, ["10", "11"]);
  } finally {
    await client.close();
  }
}

Deno.test("v1 client accepts a quirky tools/list: non-object outputSchema, arrays without items, nextCursor null", async () => {
  const client = await connect(RAW_SERVER("ok"), ["--name", "quirky"]);
  try {
    deepStrictEqual(client.getServerVersion(), { name: "quirky", version: "0.1.0" });
    deepStrictEqual(client.getServerCapabilities(), { tools: {} });
    const list = await client.listTools();
    strictEqual(list.nextCursor, undefined);
    strictEqual(
      "ttlMs" in list || "cacheScope" in list || "resultType" in list || "_meta" in list,
      false,
    );
    deepStrictEqual(list.tools.map((t: { name: string }) => [t.name, "outputSchema" in t]), [
      ["array_no_items", false],
      ["non_object_output", false],
      ["object_output", true],
    ]);
    const props = list.tools[0]!.inputSchema.properties as Record<string, Record<string, unknown>>;
    deepStrictEqual(props.tags, { type: "array", items: {} });
    deepStrictEqual(props.pairs, {
      type: "array",
      prefixItems: [{ type: "string" }],
      items: {},
      maxItems: 1,
    });
    deepStrictEqual((props.nested!.properties as Record<string, unknown>).deep, {
      type: "array",
      items: {},
    });
  } finally {
    await client.close();
  }
});
