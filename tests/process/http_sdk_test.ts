/**
 * The v1 SDK client (as VS Code runs it: it starts the program and speaks
 * over its stdio) through the real bridge to a real SDK v2 server over
 * Streamable HTTP on 127.0.0.1; the process's stderr is scanned for the
 * URL's path and query. The data_only icon rule of a remote server is seen
 * here end to end. The other tests of the SDK upstream run the bridge in
 * process (tests/upstream/http_test.ts, http_response_test.ts).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveSdk } from "../fixtures/http_upstream.ts";
import { connectV1 } from "./helpers.ts";
import { startDelayProxy } from "../fixtures/delay_proxy.ts";

/** The bridge must never print the path or the query of the URL. */
function assertNoSecret(text: string): void {
  for (const secret of ["secret-path", "sekrit-query"]) {
    ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
  }
}

// With `--protocol auto` a 2026-07-28 upstream gets the modern path, unchanged.
for (const options of [[], ["--protocol", "auto"]]) {
  Deno.test(`http: v1 client uses tools, prompts, resources, templates and completion${options.length ? ` (${options.join(" ")})` : ""}`, () =>
    usesEverything(options));
}

async function usesEverything(options: string[]): Promise<void> {
  await using upstream = serveSdk();
  const { client, stderr } = await connectV1([...options, upstream.url]);
  try {
    deepStrictEqual(client.getServerVersion(), {
      name: "fixture-http",
      version: "1.2.3",
      // data_only: the https icon of a remote server is gone.
      icons: [{ src: "data:image/png;base64,AAAA" }],
    });
    strictEqual(client.getInstructions(), "http fixture instructions");
    const tools = await client.listTools();
    ok(tools.tools.some((t: { name: string }) => t.name === "echo"));
    deepStrictEqual(await client.callTool({ name: "echo", arguments: { text: "hi" } }), {
      content: [{ type: "text", text: "hi" }],
    });
    deepStrictEqual((await client.getPrompt({ name: "greet" })).messages, [
      { role: "user", content: { type: "text", text: "Hello." } },
    ]);
    deepStrictEqual((await client.listPrompts()).prompts.map((p: { name: string }) => p.name), [
      "greet",
    ]);
    deepStrictEqual((await client.listResources()).resources.map((r: { uri: string }) => r.uri), [
      "fixture://readme",
    ]);
    deepStrictEqual(await client.readResource({ uri: "fixture://readme" }), {
      contents: [{ uri: "fixture://readme", text: "readme text" }],
    });
    deepStrictEqual(
      (await client.listResourceTemplates()).resourceTemplates.map((
        t: { uriTemplate: string },
      ) => t.uriTemplate),
      ["fixture://notes/{id}"],
    );
    const completion = await client.complete({
      ref: { type: "ref/resource", uri: "fixture://notes/{id}" },
      argument: { name: "id", value: "1" },
    });
    deepStrictEqual(completion.completion.values, ["10", "11"]);
    // The icon rule on the resource links of a tools/call result.
    const linked = await client.callTool({ name: "link", arguments: {} });
    deepStrictEqual(linked.content, [
      {
        type: "resource_link",
        uri: "fixture://readme",
        name: "readme",
        icons: [{ src: "DATA:image/png;base64,AAAA" }],
      },
      { type: "resource_link", uri: "fixture://other", name: "other" },
    ]);
    deepStrictEqual(await client.callTool({ name: "fail", arguments: {} }), {
      content: [{ type: "text", text: "failure" }],
      isError: true,
    });
    // An upstream error goes on unchanged (not an error of the bridge).
    const failed = await client.getPrompt({ name: "nope" }).then(
      () => undefined,
      (error: { code?: number; data?: { cause?: string } }) => error,
    );
    ok(failed?.code !== undefined && failed.code !== -32603, JSON.stringify(failed));
  } finally {
    await client.close();
  }
  assertNoSecret(stderr());
  // Every POST carries the headers of revision 2026-07-28.
  const calls = upstream.seen.filter((r) => r.headers.get("mcp-method") === "tools/call");
  ok(calls.length >= 3);
  for (const call of calls) {
    strictEqual(call.headers.get("accept"), "application/json, text/event-stream");
    strictEqual(call.headers.get("content-type"), "application/json");
    strictEqual(call.headers.get("mcp-protocol-version"), "2026-07-28");
    ok(call.headers.get("mcp-name"));
  }
}

Deno.test("http/1.1: 50 calls in turn to an SDK v2 server share one or two connections (every response's connection comes back)", async () => {
  await using upstream = serveSdk();
  // A proxy without delay that counts the connections the bridge opens.
  const proxy = startDelayProxy(Number(new URL(upstream.url).port), 0);
  const url = new URL(upstream.url);
  url.port = String(proxy.port);
  const { client } = await connectV1([url.href]);
  try {
    await client.listTools();
    const before = proxy.connections();
    for (let i = 0; i < 50; i++) {
      deepStrictEqual(await client.callTool({ name: "echo", arguments: { text: `${i}` } }), {
        content: [{ type: "text", text: `${i}` }],
      });
    }
    // The listen stream, if any, holds one; the calls share one or two.
    ok(proxy.connections() - before <= 2, `${proxy.connections() - before} new connections`);
  } finally {
    await client.close();
    proxy.close();
  }
});
