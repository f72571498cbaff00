/**
 * The v1 SDK client (as VS Code runs it) through the real bridge to a real
 * SDK v2 server over Streamable HTTP on 127.0.0.1.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { connectV1, UrlBridge } from "../fixtures/http_bridge.ts";
import { serveRaw, serveSdk } from "../fixtures/http_upstream.ts";
import { waitFor } from "../wait.ts";

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
  Deno.test(`http: list changes and resources/subscribe through the listen stream${options.length ? ` (${options.join(" ")})` : ""}`, () =>
    listenStream(options));
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

Deno.test("http: progress, logging and cancellation over SSE", async () => {
  await using upstream = serveSdk();
  await using bridge = new UrlBridge([upstream.url]);
  await bridge.initialize({});
  await bridge.request("lvl", "logging/setLevel", { level: "debug" });
  await bridge.response("lvl");
  await bridge.request(1, "tools/call", {
    name: "flood",
    arguments: { count: 5 },
    _meta: { progressToken: "tok" },
  });
  const result = await bridge.response(1);
  deepStrictEqual(result.result, { content: [{ type: "text", text: "flooded 5" }] });
  const progress = bridge.queued.filter((m) => m.method === "notifications/progress");
  deepStrictEqual(
    progress.map((m) => (m.params as { progress: number }).progress),
    [1, 2, 3, 4, 5],
  );
  ok(progress.every((m) => (m.params as { progressToken: string }).progressToken === "tok"));

  await bridge.request(2, "tools/call", { name: "log", arguments: { level: "warning" } });
  await bridge.response(2);
  const log = await bridge.take((m) => m.method === "notifications/message");
  deepStrictEqual((log?.params as { data: unknown }).data, { note: "hello" });

  // A cancelled call gets no response, and its POST is aborted.
  await bridge.request(3, "tools/call", { name: "slow", arguments: { ms: 5000 } });
  const deadline = Date.now() + 5000;
  while (!upstream.seen.some((r) => r.body.includes('"slow"')) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 3, reason: "user" },
  });
  await bridge.request(4, "ping");
  await bridge.response(4);
  const cancel = await waitFor(
    "the cancellation at the server",
    () => upstream.seen.find((r) => r.body.includes('"notifications/cancelled"')),
    { intervalMs: 10 },
  ).catch(() => undefined);
  ok(cancel, "the cancellation reached the server as its own POST");
  strictEqual(await bridge.take((m) => m.id === 3, 300), null);
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

async function listenStream(options: string[]): Promise<void> {
  await using upstream = serveSdk();
  await using bridge = new UrlBridge([...options, upstream.url]);
  const init = await bridge.initialize({});
  const caps = (init.result as { capabilities: Record<string, unknown> }).capabilities;
  deepStrictEqual(caps.resources, { subscribe: true, listChanged: true });
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The first acknowledgment gives one change per declared list.
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  ok(await bridge.take((m) => m.method === "notifications/resources/list_changed"));
  const listen = upstream.seen.find((r) => r.headers.get("mcp-method") === "subscriptions/listen");
  ok(listen);

  await bridge.request(1, "resources/subscribe", { uri: "fixture://readme" });
  deepStrictEqual((await bridge.response(1)).result, {});
  await bridge.request(2, "tools/call", { name: "touch", arguments: { uri: "fixture://readme" } });
  await bridge.response(2);
  const updated = await bridge.take((m) =>
    m.method === "notifications/resources/updated" &&
    (m.params as { uri: string }).uri === "fixture://readme"
  );
  deepStrictEqual(updated, {
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri: "fixture://readme" },
  });
  await bridge.request(3, "tools/call", { name: "add_tool", arguments: { name: "fresh" } });
  await bridge.response(3);
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  await bridge.request(4, "tools/list");
  const tools = (await bridge.response(4)).result as { tools: { name: string }[] };
  ok(tools.tools.some((t) => t.name === "fresh"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
  if (options.includes("auto")) ok(bridge.stderr.includes("info: revision 2026-07-28"));
}

Deno.test("http: an input round (elicitation) through the bridge", async () => {
  await using upstream = serveSdk();
  await using bridge = new UrlBridge([upstream.url]);
  await bridge.initialize({ elicitation: { form: {} } });
  await bridge.request(1, "tools/call", { name: "ask", arguments: {} });
  const question = await bridge.take((m) => m.method === "elicitation/create");
  ok(question, `no question; stderr:\n${bridge.stderr}`);
  await bridge.send({
    jsonrpc: "2.0",
    id: question.id,
    result: { action: "accept", content: { name: "Ada" } },
  });
  const result = (await bridge.response(1)).result as { content: { text: string }[] };
  deepStrictEqual(JSON.parse(result.content[0]!.text), { name: "Ada" });
  strictEqual(await bridge.exit(), 0);
});

/** A schema with an `x-mcp-header` (the SDK's JSON Schema type does not know the keyword). */
const ROUTE_SCHEMA = JSON.parse(
  '{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}',
);

Deno.test("http: a tools/call before any tools/list of a tool with x-mcp-header: the bridge lists the tools itself and calls once more", async () => {
  const handler = createMcpHandler(() => {
    const s = new McpServer({ name: "param", version: "1" }, { capabilities: { tools: {} } });
    s.registerTool(
      "route",
      {
        inputSchema: fromJsonSchema<Record<string, unknown>>(ROUTE_SCHEMA),
      },
      (args: Record<string, unknown>) => ({ content: [{ type: "text", text: `${args.region}` }] }),
    );
    return s;
  }, { legacy: "reject", keepAliveMs: 0 });
  await using upstream = serveRaw((request) => handler.fetch(request), "/mcp/secret-path");
  await using bridge = new UrlBridge([upstream.url]);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "route", arguments: { region: "eu" } });
  deepStrictEqual((await bridge.response(1)).result, { content: [{ type: "text", text: "eu" }] });
  const methods = upstream.seen.map((r) => r.headers.get("mcp-method"));
  deepStrictEqual(methods.slice(-3), ["tools/call", "tools/list", "tools/call"]);
  strictEqual(upstream.seen.at(-1)!.headers.get("mcp-param-region"), "eu");
  strictEqual(upstream.seen.at(-3)!.headers.get("mcp-param-region"), null);
  // The client got the call's result only: the bridge's own list is not forwarded.
  ok(!bridge.queued.some((m) => m.id !== 1 && "result" in m), JSON.stringify(bridge.queued));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stderr);
  await handler.close();
});
