/**
 * The front end in process: with small limits and a real upstream child, and
 * the rows of its message table and the steps of initialize as raw lines
 * (the bridge of the command line flags in this process: `in_process.ts`),
 * and on a scripted link for its one response per request.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertExcludes } from "../assert.ts";
import { Frontend } from "../../lib/frontend/frontend.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import type { JsonObject, Message } from "../../lib/jsonrpc/message.ts";
import type { LinkEnd, UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { INITIALIZE_REQUEST, LineSplitter, MODERN_SERVER, RAW_SERVER } from "../process/helpers.ts";
import { server } from "../fixtures/modern_server.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { waitFor } from "../wait.ts";
import { InProcessBridge } from "./in_process.ts";
import { ChildStderr, ConsoleErrors } from "./in_process_tools.ts";

const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};
const MODERN_META = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } };

function errorOf(
  msg: Record<string, unknown>,
): { code: number; message: string; data?: Record<string, unknown> } {
  return msg.error as { code: number; message: string; data?: Record<string, unknown> };
}

Deno.test("a request without a response in its limit gets timeout with the method and the limit", async () => {
  await using t = new InProcessBridge(
    ["--call-timeout", "0.3", "--request-timeout", "5"],
    MODERN_SERVER,
  );
  await t.initialize();
  strictEqual(t.frontend.state, "ready");
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 3000 } },
  });
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    id: 2,
    error: {
      code: -32603,
      message: "The upstream server did not answer in time. See the Output channel of the server.",
      data: { cause: "timeout", detail: "method: tools/call, limit: 300 ms" },
    },
  });
  strictEqual(await t.exit(), 0);
  strictEqual(t.frontend.state, "closing");
});

Deno.test("the in-flight limit is a named limit that tests can make smaller", async () => {
  // Over the memory link: an SDK v2 server in process, no child to start.
  await using t = new InProcessBridge(["--max-in-flight", "2"], buildServer);
  await t.initialize();
  for (const id of [2, 3, 4]) {
    await t.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 200 } },
    });
  }
  const first = await t.next();
  deepStrictEqual([first?.id, (first?.error as { data: { cause: string } }).data.cause], [
    4,
    "too_many_requests",
  ]);
  const ids = [(await t.next())?.id, (await t.next())?.id].sort();
  deepStrictEqual(ids, [2, 3]);
  strictEqual(await t.exit(), 0);
});

Deno.test("no answers in the answer limit: input_timeout, and the questions get notifications/cancelled", async () => {
  // Over the memory link: the limit of the client's answers applies there too.
  await using t = new InProcessBridge(["--input-timeout", "0.3"], buildServer);
  await t.initialize({ elicitation: { form: {} } });
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "confirm", arguments: {} },
  });
  deepStrictEqual((await t.next())?.method, "elicitation/create");
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "no answer in time" },
  });
  const response = await t.next();
  deepStrictEqual([response?.id, (response?.error as { data: unknown }).data], [2, {
    cause: "input_timeout",
  }]);
  strictEqual(await t.exit(), 0);
});

Deno.test("before initialize: ping, setLevel, discover, forwarded and unknown methods", async () => {
  await using bridge = new InProcessBridge([], server);
  await bridge.request(1, "ping");
  deepStrictEqual(await bridge.response(1), { jsonrpc: "2.0", id: 1, result: {} });
  await bridge.request(2, "logging/setLevel", { level: "debug" });
  deepStrictEqual((await bridge.response(2)).result, {});
  await bridge.request(3, "logging/setLevel", { level: "loud" });
  deepStrictEqual(errorOf(await bridge.response(3)), {
    code: -32602,
    message: "The parameters of the request are not valid.",
    data: { cause: "invalid_params" },
  });
  await bridge.request(4, "server/discover", {});
  deepStrictEqual(errorOf(await bridge.response(4)).data, { cause: "method_not_found" });
  await bridge.request(5, "tools/list");
  deepStrictEqual(errorOf(await bridge.response(5)), {
    code: -32600,
    message: "The client did not initialize the connection. Send initialize first.",
    data: { cause: "not_initialized" },
  });
  await bridge.request(6, "tools/list", MODERN_META);
  strictEqual(errorOf(await bridge.response(6)).code, -32601);
  await bridge.request(7, "no/such", {});
  strictEqual(errorOf(await bridge.response(7)).code, -32600);
  await bridge.request(8, "resources/subscribe", { uri: "x://" });
  strictEqual(errorOf(await bridge.response(8)).code, -32600);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("initialize: the result, a second initialize, and requests in ready", async () => {
  await using bridge = new InProcessBridge([], server);
  const init = await bridge.initialize();
  deepStrictEqual(init.result, {
    protocolVersion: "2025-11-25",
    capabilities: {
      logging: {},
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
    },
    serverInfo: { name: "fixture-2026", version: "9.9.9", title: "Fixture" },
    instructions: "fixture instructions",
  });
  await bridge.request(2, "initialize", INIT);
  deepStrictEqual(errorOf(await bridge.response(2)), {
    code: -32600,
    message: "The client already sent initialize on this connection.",
    data: { cause: "already_initialized" },
  });
  await bridge.request(3, "server/discover", {});
  strictEqual(errorOf(await bridge.response(3)).code, -32601);
  await bridge.request(4, "no/such", {});
  deepStrictEqual(errorOf(await bridge.response(4)).data, { cause: "method_not_found" });
  await bridge.request(5, "resources/subscribe", { uri: "fixture://readme" });
  strictEqual(errorOf(await bridge.response(5)).code, -32601);
  // Notifications get no answer; the next request is answered first.
  await bridge.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
  await bridge.send({ jsonrpc: "2.0", method: "notifications/whatever" });
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { reason: "no id" },
  });
  await bridge.request(6, "tools/call", {
    name: "echo",
    arguments: { text: "x" },
    task: { ttl: 1 },
  });
  deepStrictEqual((await bridge.next())?.id, 6);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("initialize with params that are not valid gets -32602, and the bridge can initialize again", async () => {
  await using bridge = new InProcessBridge([], server);
  await bridge.request(1, "initialize", { protocolVersion: 5 });
  deepStrictEqual(errorOf(await bridge.response(1)), {
    code: -32602,
    message: "The parameters of the request are not valid.",
    data: { cause: "invalid_params" },
  });
  await bridge.request(2, "initialize", INIT);
  const second = await bridge.response(2);
  ok(second.result !== undefined, JSON.stringify(second));
});

Deno.test("a command that cannot start gives spawn_failed; the bridge stays open", async () => {
  await using bridge = new InProcessBridge([], ["/nonexistent/secret-path/server"]);
  await bridge.request(1, "initialize", INIT);
  const error = errorOf(await bridge.response(1));
  deepStrictEqual(error.data, { cause: "spawn_failed" });
  assertExcludes(JSON.stringify(error), "secret-path");
  await bridge.request(2, "ping");
  deepStrictEqual((await bridge.response(2)).result, {});
  await bridge.request(3, "initialize", INIT);
  deepStrictEqual(errorOf(await bridge.response(3)).data, { cause: "spawn_failed" });
  strictEqual(await bridge.exit(), 0);
});

Deno.test("discover failures: upstream code kept, -32042 becomes -32603, silent gives the limit, exit", async (t) => {
  await t.step("error", async () => {
    await using bridge = new InProcessBridge([], RAW_SERVER("error"));
    await bridge.request(1, "initialize", INIT);
    const error = errorOf(await bridge.response(1));
    strictEqual(error.code, -32001);
    deepStrictEqual(error.data, { cause: "discover_failed", detail: "discover refused" });
    // Back to awaiting_initialize.
    await bridge.request(2, "tools/list");
    deepStrictEqual(errorOf(await bridge.response(2)).data, { cause: "not_initialized" });
  });
  await t.step("reserved", async () => {
    await using bridge = new InProcessBridge([], RAW_SERVER("reserved"));
    await bridge.request(1, "initialize", INIT);
    const error = errorOf(await bridge.response(1));
    strictEqual(error.code, -32603);
    deepStrictEqual(error.data, { cause: "discover_failed", detail: "go there" });
  });
  await t.step("silent", async () => {
    await using bridge = new InProcessBridge(["--discover-timeout", "0.5"], RAW_SERVER("silent"));
    await bridge.request(1, "initialize", INIT);
    const error = errorOf(await bridge.response(1));
    deepStrictEqual(error.data, { cause: "discover_failed", detail: "no response in 500 ms" });
  });
  await t.step("exit", async () => {
    await using bridge = new InProcessBridge([], RAW_SERVER("exit"));
    await bridge.request(1, "initialize", INIT);
    deepStrictEqual(errorOf(await bridge.response(1)).data?.cause, "discover_failed");
    strictEqual(await bridge.exit(), 0);
  });
});

Deno.test("a canceled initialize gets no response and returns to awaiting_initialize", async () => {
  // The raw server's stderr, which the process test reads in the bridge's stderr (inherited).
  using upstream = new ChildStderr(RAW_SERVER("silent"));
  await using bridge = new InProcessBridge([], upstream.command);
  const stderr = () => bridge.stderr + upstream.text;
  await bridge.request("i1", "initialize", INIT);
  await waitFor(
    "the discover upstream",
    () => stderr().includes("raw: server/discover unanswered"),
  );
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "i1" },
  });
  await bridge.request(2, "tools/list");
  const next = await bridge.next();
  deepStrictEqual(next?.id, 2);
  deepStrictEqual(errorOf(next!).data, { cause: "not_initialized" });
  strictEqual(await bridge.exit(), 0);
  assertExcludes(stderr(), '"id":"i1"');
});

Deno.test("forwarded params: task and _meta removed, other members kept, non-object params become {}", async () => {
  await using bridge = new InProcessBridge([], RAW_SERVER("ok"));
  await bridge.initialize();
  await bridge.request(2, "tools/call", {
    name: "params",
    arguments: { a: [1] },
    extra: "kept",
    task: { ttl: 5 },
    _meta: {
      progressToken: "p",
      traceparent: "00-abc-01",
      "vscode.chat/id": 7,
      secret: "dropped",
      "vscode.mcp/x": 1,
    },
  });
  const got = (await bridge.response(2)).result as { structuredContent: Record<string, unknown> };
  const { _meta, ...rest } = got.structuredContent;
  deepStrictEqual(rest, { name: "params", arguments: { a: [1] }, extra: "kept" });
  const meta = _meta as Record<string, unknown>;
  strictEqual(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
  deepStrictEqual(meta["io.modelcontextprotocol/clientInfo"], { name: "raw-test", version: "1" });
  strictEqual(meta.traceparent, "00-abc-01");
  strictEqual(meta["vscode.chat/id"], 7);
  deepStrictEqual(Object.keys(meta).filter((k) => k === "secret" || k === "vscode.mcp/x"), []);
  strictEqual(typeof meta.progressToken, "number"); // the token of the round, not the client's
});

Deno.test("upstream errors: -32042 becomes -32603 without data; others pass unchanged", async () => {
  await using bridge = new InProcessBridge([], RAW_SERVER("ok"));
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "reserved" });
  deepStrictEqual((await bridge.response(2)).error, { code: -32603, message: "open this" });
  await bridge.request(3, "tools/call", { name: "error" });
  deepStrictEqual((await bridge.response(3)).error, {
    code: -32099,
    message: "custom failure",
    data: { k: 1 },
  });
  await bridge.request(4, "tools/call", { name: "bad_error" });
  deepStrictEqual((await bridge.response(4)).error, {
    code: -32603,
    message: "The upstream server sent an error. See the Output channel of the server.",
    data: { cause: "rpc" },
  });
});

Deno.test("the client never gets an upstream notifications/cancelled or a notification of no request", async () => {
  await using bridge = new InProcessBridge([], RAW_SERVER("ok"));
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "cancelled" });
  const next = await bridge.next();
  strictEqual(next?.id, 2);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("a too-long upstream line fails its request with invalid_response", async () => {
  await using bridge = new InProcessBridge(["--max-line-bytes", "2000"], RAW_SERVER("ok"));
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "long" });
  deepStrictEqual(errorOf(await bridge.response(2)).data, { cause: "invalid_response" });
  await bridge.request(3, "tools/call", { name: "echo" });
  const echo = await bridge.response(3);
  ok(echo.result !== undefined, JSON.stringify(echo));
});

Deno.test("requests above 256 in flight get too_many_requests at once; the reader keeps reading", async () => {
  using _quiet = new ConsoleErrors(); // 256 lines of the fixture's slow tool
  await using bridge = new InProcessBridge([], server);
  await bridge.initialize();
  let batch = "";
  for (let i = 0; i < 257; i++) {
    batch += JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 3000 } },
    }) + "\n";
  }
  batch += JSON.stringify({ jsonrpc: "2.0", id: "p", method: "ping" }) + "\n";
  await bridge.writeRaw(batch);
  const first = await bridge.next();
  deepStrictEqual(first?.id, 256);
  deepStrictEqual(errorOf(first!), {
    code: -32603,
    message: "The connection has too many requests in flight",
    data: { cause: "too_many_requests" },
  });
  deepStrictEqual((await bridge.next())?.id, "p");
  // Cancel all: no responses for them.
  for (let i = 0; i < 256; i++) {
    await bridge.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: i },
    });
  }
  await bridge.request("after", "tools/call", { name: "echo", arguments: { text: "ok" } });
  deepStrictEqual((await bridge.next(8000))?.id, "after");
});

Deno.test("the upstream stops: requests in flight and later requests get upstream_exited; exit code 1", async () => {
  await using bridge = new InProcessBridge([], MODERN_SERVER);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "slow", arguments: { ms: 10000 } });
  await bridge.request(3, "tools/call", { name: "die" });
  const a = await bridge.next();
  const b = await bridge.next();
  deepStrictEqual(new Set([a?.id, b?.id]), new Set([2, 3]));
  deepStrictEqual(errorOf(a!).data, { cause: "upstream_exited" });
  deepStrictEqual(errorOf(b!).data, { cause: "upstream_exited" });
  await bridge.request(4, "tools/list");
  deepStrictEqual(errorOf(await bridge.response(4)), {
    code: -32603,
    message: "The upstream server process stopped. See the Output channel of the server.",
    data: { cause: "upstream_exited" },
  });
  await bridge.request(5, "ping");
  deepStrictEqual((await bridge.response(5)).result, {});
  strictEqual(await bridge.exit(), 1);
});

/**
 * A link whose upstream answers server/discover, and answers each other
 * request with `result`: the only peer of the front end in this test.
 */
function scriptedLink(result: () => unknown): UpstreamLink {
  let deliver: ((frame: UpstreamFrame) => void) | undefined;
  let end!: (end: LinkEnd) => void;
  const ended = new Promise<LinkEnd>((resolve) => end = resolve);
  return {
    isRemote: false,
    read(onFrame) {
      deliver = (frame) => void onFrame(frame);
      return ended.then(() => {});
    },
    send(message: Message) {
      const m = message as JsonObject;
      if (typeof m.id === "number") {
        const value = m.method === "server/discover"
          ? { jsonrpc: "2.0", id: m.id, result: { capabilities: { tools: {} } } }
          : { jsonrpc: "2.0", id: m.id, result: result() };
        queueMicrotask(() => deliver?.({ kind: "message", value: value as JsonObject }));
      }
      return Promise.resolve();
    },
    ended,
    close() {
      end({ kind: "closed" });
      return Promise.resolve();
    },
  };
}

async function session(link: UpstreamLink, lines: unknown[]): Promise<unknown[]> {
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: { ...DEFAULT_LIMITS, shutdown_grace_ms: 200 },
    log: SILENT_LOGGER,
    fallback: { name: "t", version: "0" },
    connect: () => Promise.resolve(link),
    output: output.writable,
  });
  const out: unknown[] = [];
  const reading = (async () => {
    const text = output.readable.pipeThrough(new TextDecoderStream());
    for await (const line of text.pipeThrough(new LineSplitter())) out.push(JSON.parse(line));
  })();
  const encode = (messages: unknown[]) =>
    new TextEncoder().encode(messages.map((line) => JSON.stringify(line) + "\n").join(""));
  const input = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encode(lines.slice(0, 1)));
      // The rest after the initialize result.
      await waitFor("the initialize result", () => out.length === 1);
      controller.enqueue(encode(lines.slice(1)));
      // The end of the input only once each request has its response.
      await waitFor("a response to each request", () => out.length === lines.length);
      controller.close();
    },
  });
  const [exit] = await Promise.all([frontend.run(input), reading]);
  strictEqual(exit, 0);
  return out;
}

Deno.test("a throw in the handling of a request still gives its one response: -32603, no detail", async () => {
  // A result that throws when the result rules read it: an unexpected exception.
  const hostile = () =>
    new Proxy({}, {
      get: () => undefined,
      deleteProperty() {
        throw new Error("secret detail of the exception");
      },
      ownKeys() {
        throw new Error("secret detail of the exception");
      },
    });
  const out = await session(scriptedLink(hostile), [
    INITIALIZE_REQUEST,
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "ping" },
  ]);
  strictEqual((out[0] as { id: number }).id, 1);
  const byId = (a: unknown, b: unknown) => (a as { id: number }).id - (b as { id: number }).id;
  deepStrictEqual(out.slice(1).sort(byId), [
    { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "Internal error" } },
    { jsonrpc: "2.0", id: 3, result: {} },
  ]);
});
