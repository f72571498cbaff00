/**
 * The rules of the pass-through (LEGACY.md) on the wire: the bridge of the
 * command line in process with `--protocol auto` in front of a raw server of
 * revision 2025-11-25 (a child), driven line by line.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { InProcessBridge } from "../frontend/in_process.ts";
import { CLIENT_CAPABILITIES, LEGACY_RAW } from "./legacy_raw.ts";

type Json = Record<string, unknown>;

async function call(bridge: InProcessBridge, id: string | number, name: string, extra: Json = {}) {
  await bridge.request(id, "tools/call", { name, arguments: {}, ...extra });
}

/** What the raw server received, as the tool "seen" reports it. */
async function seen(bridge: InProcessBridge, id: string): Promise<Json[]> {
  await call(bridge, id, "seen");
  const response = await bridge.response(id);
  return ((response.result as Json).structuredContent as { seen: Json[] }).seen;
}

Deno.test("pass-through: initialize, ids, params, repairs and the server's requests", async () => {
  await using bridge = new InProcessBridge(["--protocol", "auto"], LEGACY_RAW());
  const init = await bridge.initialize(CLIENT_CAPABILITIES, true);
  // The upstream's version, capabilities less tasks, serverInfo with every icon (stdio).
  deepStrictEqual(init.result, {
    protocolVersion: "2025-06-18",
    capabilities: { tools: { listChanged: true }, logging: {} },
    serverInfo: {
      name: "legacy-raw",
      version: "1.2.3",
      icons: [{ src: "https://example.com/i.png" }, { src: "data:image/png;base64,AA==" }],
    },
    instructions: "raw instructions",
  });

  // The result rules: nextCursor null removed, R6, a non-object outputSchema removed.
  await bridge.request("list-1", "tools/list");
  const list = await bridge.response("list-1");
  deepStrictEqual(list.result, {
    tools: [
      {
        name: "echo",
        inputSchema: { type: "object", properties: { list: { type: "array", items: {} } } },
      },
      { name: "ask", inputSchema: { type: "object" } },
    ],
  });

  // The params go upstream with `task` removed; the client's id comes back as sent.
  await call(bridge, 42, "echo", { task: { ttl: 1 }, _meta: { "vscode.x": 1 } });
  const echo = await bridge.response(42);
  const echoed = ((echo.result as Json).structuredContent as { params: Json }).params;
  deepStrictEqual(echoed, { name: "echo", arguments: {}, _meta: { "vscode.x": 1 } });
  // The text mirror of structuredContent (a result rule).
  deepStrictEqual((echo.result as Json).content, [{
    type: "text",
    text: JSON.stringify({ params: echoed }),
  }]);

  // A request of the server: to the client under a bridge id, the answer back under its own.
  await call(bridge, "ask-1", "ask");
  const asked = await bridge.next();
  strictEqual(asked?.method, "sampling/createMessage");
  strictEqual(asked?.id, "b-1");
  await bridge.send({ jsonrpc: "2.0", id: "b-1", result: { answered: true } });
  const answered = await bridge.response("ask-1");
  deepStrictEqual((answered.result as Json).structuredContent, {
    answer: { jsonrpc: "2.0", id: "s-1", result: { answered: true } },
  });

  // ping of the server goes to the client too.
  await call(bridge, "ping-1", "ping_client");
  const ping = await bridge.next();
  deepStrictEqual(ping, { jsonrpc: "2.0", id: "b-2", method: "ping" });
  await bridge.send({ jsonrpc: "2.0", id: "b-2", result: {} });
  await bridge.response("ping-1");

  // The server cancels its own request: the client gets the cancel under the bridge id.
  await call(bridge, "ac-1", "ask_cancel");
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    id: "b-3",
    method: "elicitation/create",
    params: { message: "m" },
  });
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-3", reason: "the server gave up" },
  });
  await bridge.response("ac-1");
  // A late answer is dropped: the server never gets it.
  await bridge.send({ jsonrpc: "2.0", id: "b-3", result: { action: "decline" } });

  // The server cancels a request of the client: a cancel under the client's id, no response.
  await call(bridge, "cm-1", "cancel_me");
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "cm-1", reason: "the server stopped it" },
  });

  // Progress under the client's token (0, as the Copilot harness sends), none after the result.
  await call(bridge, "p-1", "progress", { _meta: { progressToken: 0 } });
  const progress = [];
  for (;;) {
    const message = await bridge.next();
    if (message?.id === "p-1") break;
    progress.push(message);
  }
  deepStrictEqual(
    progress,
    [1, 2, 3].map((n) => ({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 0, progress: n, total: 3 },
    })),
  );

  // Notifications of the server: the listed ones reach the client, others are dropped.
  await call(bridge, "n-1", "noise");
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
  });
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: "d" },
  });
  strictEqual((await bridge.next())?.id, "n-1");

  // The upstream's errors reach the client unchanged, -32042 too.
  await call(bridge, "e-1", "error");
  deepStrictEqual((await bridge.response("e-1")).error, {
    code: -32042,
    message: "Open a URL",
    data: { elicitations: [] },
  });

  // logging/setLevel goes upstream; ping is answered by the bridge.
  await bridge.request("lvl", "logging/setLevel", { level: "debug" });
  deepStrictEqual((await bridge.response("lvl")).result, {});
  await bridge.request("png", "ping");
  deepStrictEqual((await bridge.response("png")).result, {});

  // The client cancels a slow call: the server gets the cancel under the upstream id.
  await call(bridge, "slow-1", "slow");
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "slow-1", reason: "user" },
  });
  const upstream = await seen(bridge, "seen-1");
  const methods = upstream.map((m) => m.method ?? "response");
  ok(methods.includes("logging/setLevel"));
  ok(methods.includes("notifications/initialized"));
  // The bridge's own ids upstream are its numbers: no id of the client reaches the server.
  const ids = upstream.filter((m) => typeof m.method === "string" && "id" in m).map((m) => m.id);
  ok(ids.every((id) => typeof id === "number"), JSON.stringify(ids));
  strictEqual(new Set(ids).size, ids.length);
  const slowId = upstream.find((m) => (m.params as Json)?.name === "slow")?.id;
  const cancel = upstream.find((m) => m.method === "notifications/cancelled");
  // The reason says the event, as on the modern path (the spec's table of reasons).
  deepStrictEqual(cancel?.params, { requestId: slowId, reason: "the client canceled the request" });
  // The answers reached the server under its ids; the late answer to b-3 did not.
  deepStrictEqual(upstream.filter((m) => !("method" in m)).map((m) => m.id), ["s-1", 5]);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("pass-through: the end of the input and the loss of the upstream cancel the server's requests", async () => {
  {
    await using bridge = new InProcessBridge(["--protocol", "auto"], LEGACY_RAW());
    await bridge.initialize(CLIENT_CAPABILITIES, true);
    await call(bridge, "f-1", "ask_forever");
    deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: "b-1", method: "roots/list" });
    await bridge.closeInput();
    deepStrictEqual(await bridge.rest(), [{
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "b-1", reason: "the client closed the connection" },
    }]);
    strictEqual(await bridge.exit(), 0);
  }
  await using bridge = new InProcessBridge(["--protocol", "auto"], LEGACY_RAW());
  await bridge.initialize(CLIENT_CAPABILITIES, true);
  await call(bridge, "f-1", "ask_forever");
  strictEqual((await bridge.next())?.id, "b-1");
  await call(bridge, "d-1", "die");
  const got = [await bridge.next(), await bridge.next()];
  const cancel = got.find((m) => m?.method === "notifications/cancelled");
  deepStrictEqual(cancel?.params, { requestId: "b-1", reason: "the upstream server stopped" });
  const lost = got.find((m) => m?.id === "f-1" || m?.id === "d-1") as Json;
  strictEqual((lost.error as { data: Json }).data.cause, "upstream_exited");
  await bridge.request("after", "tools/list");
  strictEqual(
    ((await bridge.response("after")).error as { data: Json }).data.cause,
    "upstream_exited",
  );
  strictEqual(await bridge.exit(), 1);
});

Deno.test("pass-through: the time limits, the input timeout and the bound of requests in flight", async () => {
  await using bridge = new InProcessBridge(
    [
      "--protocol",
      "auto",
      "--call-timeout",
      "0.3",
      "--input-timeout",
      "0.3",
      "--max-in-flight",
      "2",
    ],
    LEGACY_RAW(),
  );
  await bridge.initialize(CLIENT_CAPABILITIES, true);
  // A call without an answer in its limit: timeout, with the method and the limit.
  await call(bridge, "slow-1", "slow");
  // The second request in flight is the last one allowed; the third gets an error at once.
  await call(bridge, "f-1", "ask_forever");
  await call(bridge, "over", "echo");
  deepStrictEqual(((await bridge.response("over")).error as Json).data, {
    cause: "too_many_requests",
  });
  deepStrictEqual(((await bridge.response("slow-1")).error as Json).data, {
    cause: "timeout",
    detail: "method: tools/call, limit: 300 ms",
  });
  strictEqual((((await bridge.response("f-1")).error as Json).data as Json).cause, "timeout");
  // The client did not answer the server's request in time: canceled there, an error upstream.
  deepStrictEqual([await bridge.next(), await bridge.next()], [
    { jsonrpc: "2.0", id: "b-1", method: "roots/list" },
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "b-1", reason: "no answer in time" },
    },
  ]);
  const upstream = await seen(bridge, "seen-1");
  const answer = upstream.find((m) => m.id === 88 && !("method" in m));
  strictEqual(((answer?.error as Json).data as Json).cause, "input_timeout");
  strictEqual(await bridge.exit(), 0);
});
