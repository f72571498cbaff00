/**
 * The upstream client over a fake link; and, with the bridge in process
 * (`InProcessBridge`, the real wiring of the command line), the version
 * negotiation of server/discover (SEP-2575) over HTTP and over stdio.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Json, JsonObject } from "../../lib/jsonrpc/message.ts";
import { UpstreamClient, type UpstreamClientOptions } from "../../lib/upstream/client.ts";
import { ENVELOPE_KEYS, UPSTREAM_PROTOCOL_VERSION } from "../../lib/upstream/envelope.ts";
import { type FailureKind, UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { LinkEnd } from "../../lib/upstream/link.ts";
import { waitFor, within } from "../wait.ts";
import { FakeLink } from "./fake_link.ts";
import { json, result, serveMcp } from "../fixtures/http_raw.ts";
import { DISCOVER_RESULT } from "../fixtures/raw_tcp.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { RAW_SERVER } from "../process/helpers.ts";
import { errorOf } from "./http_link_helpers.ts";

const CLIENT_INFO = { name: "bridge", version: "1" };
const CAPABILITIES = { roots: {} };
const ENVELOPE = {
  [ENVELOPE_KEYS.protocolVersion]: UPSTREAM_PROTOCOL_VERSION,
  [ENVELOPE_KEYS.clientInfo]: CLIENT_INFO,
  [ENVELOPE_KEYS.clientCapabilities]: CAPABILITIES,
};

/** A client over a fake link, with its debug lines. */
function setup(options: Partial<UpstreamClientOptions> = {}) {
  const link = new FakeLink();
  const debug: string[] = [];
  const client = new UpstreamClient(link, {
    clientInfo: CLIENT_INFO,
    capabilities: CAPABILITIES,
    debug: (line) => debug.push(line),
    ...options,
  });
  return { link, client, debug };
}

/** How a request settled: its result, or the kind and facts of its failure. */
async function outcome(promise: Promise<Json>): Promise<unknown> {
  try {
    return { result: await within(promise, 2_000, "settlement of the request") };
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    return {
      kind: error.kind,
      ...(error.error && { error: error.error }),
      ...(error.status !== undefined && { status: error.status }),
    };
  }
}

/** Ends the test's client: the link ends, the reader stops. */
async function finish(link: FakeLink, client: UpstreamClient): Promise<void> {
  link.end({ kind: "closed" });
  await within(client.done, 2_000, "end of the reader");
}

Deno.test("each request carries the envelope, the client's _meta keys and its own id", async () => {
  const { link, client } = setup();
  const first = client.request("tools/list", { cursor: "c" }, {
    meta: { "x.example/trace": "t" },
    logLevel: "info",
  });
  const second = client.request("tools/call", { name: "n" }, { onProgress: () => {} });
  deepStrictEqual(link.sent, [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        cursor: "c",
        _meta: {
          "x.example/trace": "t",
          ...ENVELOPE,
          [ENVELOPE_KEYS.logLevel]: "info",
        },
      },
    },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      // A request with progress gets its id as the progress token; no level, no logLevel key.
      params: { name: "n", _meta: { ...ENVELOPE, progressToken: 2 } },
    },
  ]);
  link.message({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
  link.message({ jsonrpc: "2.0", id: 2, result: { content: [] } });
  deepStrictEqual(await outcome(first), { result: { tools: [] } });
  deepStrictEqual(await outcome(second), { result: { content: [] } });
  await finish(link, client);
});

Deno.test("the envelope keys of the client's _meta cannot be overridden", async () => {
  const { link, client } = setup();
  const request = client.request("tools/list", {}, {
    meta: { [ENVELOPE_KEYS.protocolVersion]: "1999-01-01" },
  });
  deepStrictEqual(
    link.requests()[0]!.params._meta,
    ENVELOPE,
  );
  link.message({ jsonrpc: "2.0", id: 1, result: {} });
  await outcome(request);
  await finish(link, client);
});

Deno.test("responses are matched by id in any order; an unknown id is dropped with a debug line", async () => {
  const { link, client, debug } = setup();
  const requests = [1, 2, 3].map((n) => client.request("m", { n }, {}));
  deepStrictEqual(link.requests().map((r) => r.id), [1, 2, 3]);
  link.message({ jsonrpc: "2.0", id: 99, result: "stray" });
  link.message({ jsonrpc: "2.0", id: 3, result: "three" });
  link.message({ jsonrpc: "2.0", id: 1, result: null });
  link.message({ jsonrpc: "2.0", id: 2, result: "two" });
  // A second response for an id that was answered already.
  link.message({ jsonrpc: "2.0", id: 2, result: "again" });
  deepStrictEqual(await Promise.all(requests.map(outcome)), [
    { result: null },
    { result: "two" },
    { result: "three" },
  ]);
  await waitFor("the debug line of the second response", () => debug.length === 2);
  deepStrictEqual(debug, [
    "dropped an upstream response for the unknown id 99",
    "dropped an upstream response for the unknown id 2",
  ]);
  await finish(link, client);
});

Deno.test("errors: a valid error object is kept with its data; any other error is rpc without one", async () => {
  const { link, client } = setup();
  const errors: Json[] = [
    { code: -32001, message: "no", data: { why: 1 } },
    { code: -32002, message: "plain" },
    "boom",
    { code: 1.5, message: "fraction" },
    { code: -1 },
    null,
  ];
  const requests = errors.map(() => client.request("m", {}, {}));
  errors.forEach((error, i) => link.message({ jsonrpc: "2.0", id: i + 1, error }));
  deepStrictEqual(await Promise.all(requests.map(outcome)), [
    { kind: "rpc", error: { code: -32001, message: "no", data: { why: 1 } } },
    { kind: "rpc", error: { code: -32002, message: "plain" } },
    { kind: "rpc" },
    { kind: "rpc" },
    { kind: "rpc" },
    { kind: "rpc" },
  ]);
  await finish(link, client);
});

Deno.test("a response with neither result nor error is invalid_response", async () => {
  const { link, client } = setup();
  const request = client.request("m", {}, {});
  link.message({ jsonrpc: "2.0", id: 1 });
  deepStrictEqual(await outcome(request), { kind: "invalid_response" });
  await finish(link, client);
});

Deno.test("an invalid frame with a numeric id fails that request with invalid_response; others are dropped", async () => {
  const { link, client, debug } = setup();
  const [a, b] = [client.request("m", {}, {}), client.request("m", {}, {})];
  link.frame({ kind: "invalid", id: null });
  link.frame({ kind: "invalid", id: "2" });
  link.frame({ kind: "invalid", id: 2 });
  link.message({ jsonrpc: "2.0", id: 1, result: "ok" });
  deepStrictEqual(await outcome(b), { kind: "invalid_response" });
  deepStrictEqual(await outcome(a), { result: "ok" });
  // Ids of the client are numbers: "2" is no request of the client.
  deepStrictEqual(debug, [
    "dropped an upstream line that is not a message",
    "dropped an upstream line that is not a message",
  ]);
  await finish(link, client);
});

Deno.test("a failed frame rejects its request with its own failure, the HTTP status kept", async () => {
  const { link, client } = setup();
  const [a, b] = [client.request("m", {}, {}), client.request("m", {}, {})];
  const failure = new UpstreamFailure("transport_failed", { status: 404 });
  link.frame({ kind: "failed", id: 2, failure });
  const rejected = await b.then(() => undefined, (error) => error);
  strictEqual(rejected, failure);
  strictEqual(rejected.status, 404);
  // The link goes on: the other request still gets its response.
  link.message({ jsonrpc: "2.0", id: 1, result: "ok" });
  deepStrictEqual(await outcome(a), { result: "ok" });
  await finish(link, client);
});

Deno.test("progress goes to the request of its token only, in order", async () => {
  const { link, client } = setup();
  const seen: [number, Json | undefined][] = [];
  const a = client.request("m", {}, { onProgress: (p) => seen.push([1, p.progress]) });
  const b = client.request("m", {}, { onProgress: (p) => seen.push([2, p.progress]) });
  const c = client.request("m", {}, {});
  const progress = (token: Json, value: number) =>
    link.message({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress: value, total: 10, message: "m" },
    });
  progress(2, 1);
  progress(1, 2);
  progress(3, 3); // c asked for no progress
  progress("1", 4); // not a token of the client
  progress(2, 5);
  for (const id of [1, 2, 3]) link.message({ jsonrpc: "2.0", id, result: {} });
  progress(1, 6); // after the response
  await Promise.all([a, b, c]);
  await finish(link, client);
  deepStrictEqual(seen, [[2, 1], [1, 2], [2, 5]]);
});

Deno.test("the fields of progress are passed as the upstream server wrote them", async () => {
  const { link, client } = setup();
  const seen: unknown[] = [];
  const a = client.request("m", {}, { onProgress: (p) => seen.push(p) });
  link.message({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: 0.5, total: 1, message: "half" },
  });
  link.message({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 1, progress: "x" },
  });
  link.message({ jsonrpc: "2.0", id: 1, result: {} });
  await a;
  deepStrictEqual(seen, [
    { progress: 0.5, total: 1, message: "half" },
    { progress: "x", total: undefined, message: undefined },
  ]);
  await finish(link, client);
});

Deno.test("events go to the stream of their subscription id, before the next frame is read", async () => {
  const { link, client, debug } = setup();
  const order: string[] = [];
  const stream = client.request("subscriptions/listen", {}, {
    onEvent: (method) => order.push(`event ${method} at frame ${link.delivered}`),
  });
  const other = client.request("m", {}, {});
  const event = (subscription: Json, method: string) =>
    link.message({
      jsonrpc: "2.0",
      method,
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": subscription }, uri: "u" },
    });
  event(1, "notifications/tools/list_changed");
  event(2, "notifications/prompts/list_changed"); // request 2 is no stream
  event("1", "notifications/resources/list_changed"); // not a subscription of the client
  event(1, "notifications/resources/updated");
  link.message({ jsonrpc: "2.0", id: 2, result: {} });
  await other;
  strictEqual(link.delivered, 5);
  deepStrictEqual(order, [
    "event notifications/tools/list_changed at frame 1",
    "event notifications/resources/updated at frame 4",
  ]);
  deepStrictEqual(debug, [
    "dropped the upstream notification notifications/prompts/list_changed",
    "dropped the upstream notification notifications/resources/list_changed",
  ]);
  link.message({ jsonrpc: "2.0", id: 1, result: {} });
  await stream;
  await finish(link, client);
});

Deno.test("notifications/message: valid ones go to onLogMessage, others are dropped", async () => {
  const logs: JsonObject[] = [];
  const { link, client } = setup({ onLogMessage: (params) => logs.push(params) });
  const log = (params: Json) =>
    link.message({ jsonrpc: "2.0", method: "notifications/message", params });
  log({ level: "info", data: "a" });
  log({ level: "info" }); // no data
  log({ level: 3, data: "b" });
  log("not an object");
  log({ level: "error", data: null, logger: "l" });
  await waitFor("the frames read", () => link.delivered === 5);
  deepStrictEqual(logs, [{ level: "info", data: "a" }, {
    level: "error",
    data: null,
    logger: "l",
  }]);
  await finish(link, client);
});

Deno.test("notifications/message on a request's own exchange goes to that request's onLog; else to onLogMessage", async () => {
  const global: Json[] = [];
  const own: Json[] = [];
  const { link, client } = setup({ onLogMessage: (params) => global.push(params.data ?? null) });
  const call = client.request("tools/call", {}, {
    onLog: (params) => own.push(params.data ?? null),
  });
  const other = client.request("tools/list", {}, {});
  const [callId, listId] = link.requests().map((r) => r.id);
  const log = (data: string, via?: number) =>
    link.frame({
      kind: "message",
      value: { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } },
      ...(via !== undefined && { via }),
    });
  log("of the call", callId);
  log("of the list, which has no onLog", listId);
  log("of no exchange (stdio)");
  log("of an exchange that ended", 999);
  await waitFor("the frames read", () => link.delivered === 4);
  deepStrictEqual(own, ["of the call"]);
  deepStrictEqual(global, [
    "of the list, which has no onLog",
    "of no exchange (stdio)",
    "of an exchange that ended",
  ]);
  await finish(link, client);
  await Promise.allSettled([call, other]);
});

Deno.test("the time limit gives timeout, the caller's abort canceled; each cancels upstream with its reason", async () => {
  const { link, client } = setup();
  const timed = client.request("slow", {}, { timeoutMs: 20 });
  deepStrictEqual(await outcome(timed), { kind: "timeout" });
  const controller = new AbortController();
  const aborted = client.request("slow", {}, { timeoutMs: 60_000, signal: controller.signal });
  controller.abort("the client canceled the request");
  deepStrictEqual(await outcome(aborted), { kind: "canceled" });
  const plain = new AbortController();
  const abortedPlain = client.request("slow", {}, { signal: plain.signal });
  plain.abort();
  deepStrictEqual(await outcome(abortedPlain), { kind: "canceled" });
  deepStrictEqual(link.notifications(), [
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "the request timed out", _meta: ENVELOPE },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "the client canceled the request", _meta: ENVELOPE },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 3, reason: String(plain.signal.reason), _meta: ENVELOPE },
    },
  ]);
  // A late response of a request that timed out is dropped.
  link.message({ jsonrpc: "2.0", id: 1, result: {} });
  await finish(link, client);
});

Deno.test("an untimed link: no time limit, but the caller's abort still cancels", async () => {
  const { link, client } = setup();
  link.untimed = true;
  const request = client.request("slow", {}, { timeoutMs: 5 });
  const controller = new AbortController();
  const aborted = client.request("slow", {}, { timeoutMs: 5, signal: controller.signal });
  // Past the limit (no condition to poll: the limit must not fire).
  await new Promise((r) => setTimeout(r, 30));
  controller.abort("stop");
  link.message({ jsonrpc: "2.0", id: 1, result: "late but fine" });
  deepStrictEqual(await outcome(request), { result: "late but fine" });
  deepStrictEqual(await outcome(aborted), { kind: "canceled" });
  deepStrictEqual(link.notifications().map((n) => n.params.reason), ["stop"]);
  await finish(link, client);
});

Deno.test("a signal that is aborted already fails at once and sends nothing", async () => {
  const { link, client } = setup();
  const controller = new AbortController();
  controller.abort("gone");
  deepStrictEqual(await outcome(client.request("m", {}, { signal: controller.signal })), {
    kind: "canceled",
  });
  deepStrictEqual(link.sent, []);
  await finish(link, client);
});

Deno.test("a response before the limit: neither the limit nor a later abort cancels it upstream", async () => {
  const { link, client } = setup();
  const controller = new AbortController();
  const request = client.request("m", {}, { timeoutMs: 30, signal: controller.signal });
  link.message({ jsonrpc: "2.0", id: 1, result: "in time" });
  deepStrictEqual(await outcome(request), { result: "in time" });
  controller.abort("late");
  // Past the limit: a cancel of an answered request would show here (no condition to poll).
  await new Promise((r) => setTimeout(r, 50));
  deepStrictEqual(link.notifications(), []);
  await finish(link, client);
});

const ENDS: [string, LinkEnd, FailureKind, number?][] = [
  ["the child exited", { kind: "exited", code: 1 }, "exited"],
  ["the child was killed", { kind: "exited", code: null }, "exited"],
  ["the link closed", { kind: "closed" }, "closed"],
  ["the transport failed", { kind: "failed" }, "transport_failed"],
  [
    "the transport failed with a status",
    { kind: "failed", failure: new UpstreamFailure("invalid_response", { status: 502 }) },
    "invalid_response",
    502,
  ],
];

for (const [name, end, kind, status] of ENDS) {
  Deno.test(`the end of the link rejects everything pending with failureOfEnd: ${name}`, async () => {
    const { link, client } = setup();
    const pending = [client.request("a", {}, {}), client.request("b", {}, { timeoutMs: 60_000 })];
    link.end(end);
    const expected = status === undefined ? { kind } : { kind, status };
    deepStrictEqual(await Promise.all(pending.map(outcome)), [expected, expected]);
    deepStrictEqual(await within(client.done, 2_000, "end of the reader"), end);
    deepStrictEqual(client.end, end);
    // A request after the end fails at once with the same mapping and is not sent.
    deepStrictEqual(await outcome(client.request("c", {}, {})), expected);
    strictEqual(link.requests().length, 2);
    // What was in flight at the end is not canceled upstream: the link is gone.
    deepStrictEqual(link.notifications(), []);
    strictEqual(link.closes, 0);
  });
}

Deno.test("an output that ends while the link does not is closed after endGraceMs, and the link is closed", async () => {
  const { link, client } = setup({ endGraceMs: 30 });
  const pending = client.request("m", {}, {});
  const started = Date.now();
  link.endOutput();
  deepStrictEqual(await outcome(pending), { kind: "closed" });
  const waited = Date.now() - started;
  strictEqual(waited >= 25, true, `waited ${waited} ms, not the grace of 30 ms`);
  deepStrictEqual(await client.done, { kind: "closed" });
  strictEqual(link.closes, 1);
});

Deno.test("a link that ends within endGraceMs after its output keeps its own end", async () => {
  const { link, client } = setup({ endGraceMs: 5_000 });
  const pending = client.request("m", {}, {});
  link.endOutput();
  await new Promise((r) => setTimeout(r, 10));
  link.end({ kind: "exited", code: 3 });
  deepStrictEqual(await outcome(pending), { kind: "exited" });
  deepStrictEqual(await within(client.done, 1_000, "end of the reader"), {
    kind: "exited",
    code: 3,
  });
  strictEqual(link.closes, 0);
});

Deno.test("hold: the reader awaits the back pressure before it reads the next frame", async () => {
  let release: (() => void) | undefined;
  let held: Promise<void> | undefined;
  const { link, client } = setup({ hold: () => held });
  const requests = [client.request("m", {}, {}), client.request("m", {}, {})];
  held = new Promise((r) => release = r);
  link.message({ jsonrpc: "2.0", id: 1, result: 1 });
  link.message({ jsonrpc: "2.0", id: 2, result: 2 });
  deepStrictEqual(await outcome(requests[0]!), { result: 1 });
  // The fake link is all microtasks: one macrotask lets a reader that does not wait go on.
  await new Promise((r) => setTimeout(r, 0));
  strictEqual(link.delivered, 1);
  held = undefined;
  release!();
  deepStrictEqual(await outcome(requests[1]!), { result: 2 });
  strictEqual(link.delivered, 2);
  await finish(link, client);
});

Deno.test("requests of the upstream server: ping gets {}, any other method -32601, a bad id nothing", async () => {
  const { link, client } = setup();
  link.message({ jsonrpc: "2.0", id: 7, method: "ping" });
  link.message({ jsonrpc: "2.0", id: "s", method: "sampling/createMessage", params: {} });
  link.message({ jsonrpc: "2.0", id: { bad: 1 }, method: "ping" });
  link.message({ jsonrpc: "2.0", id: null, method: "ping" });
  link.message({ jsonrpc: "2.0", id: 8, method: "ping" });
  await waitFor("the frames read", () => link.delivered === 5);
  deepStrictEqual(link.sent, [
    { jsonrpc: "2.0", id: 7, result: {} },
    { jsonrpc: "2.0", id: "s", error: { code: -32601, message: "Method not found" } },
    { jsonrpc: "2.0", id: 8, result: {} },
  ]);
  await finish(link, client);
});

Deno.test("a send that fails rejects its request with transport_failed", async () => {
  const { link, client } = setup();
  link.sendFails = true;
  deepStrictEqual(await outcome(client.request("m", {}, {})), { kind: "transport_failed" });
  await finish(link, client);
});

Deno.test("discover: the result must be an object; the limit applies", async () => {
  const { link, client } = setup();
  const first = client.discover(5_000);
  link.message({ jsonrpc: "2.0", id: 1, result: [] });
  deepStrictEqual(await outcome(first as Promise<Json>), { kind: "invalid_response" });
  const second = client.discover(5_000);
  deepStrictEqual(link.requests()[1], {
    jsonrpc: "2.0",
    id: 2,
    method: "server/discover",
    params: { _meta: ENVELOPE },
  });
  link.message({ jsonrpc: "2.0", id: 2, result: { supportedVersions: ["2026-07-28"] } });
  deepStrictEqual(await outcome(second as Promise<Json>), {
    result: { supportedVersions: ["2026-07-28"] },
  });
  deepStrictEqual(await outcome(client.discover(20) as Promise<Json>), { kind: "timeout" });
  await finish(link, client);
});

Deno.test("close closes the link and waits for the reader", async () => {
  const { link, client } = setup();
  const pending = client.request("m", {}, {});
  await within(client.close(), 2_000, "close");
  strictEqual(link.closes, 1);
  deepStrictEqual(client.end, { kind: "closed" });
  deepStrictEqual(await outcome(pending), { kind: "closed" });
});

/** A raw upstream whose server/discover answers come from `discover` (by count). */
function versionUpstream(supported: string[]) {
  let discovers = 0;
  const upstream = serveMcp((m) => {
    if (m.method !== "server/discover") return undefined;
    discovers++;
    if (discovers === 1 || !supported.includes("2026-07-28")) {
      return json({
        jsonrpc: "2.0",
        id: m.id,
        error: {
          code: -32022,
          message: "Unsupported protocol version",
          data: { supported, requested: "2026-07-28" },
        },
      }, 400);
    }
    return result(m, DISCOVER_RESULT);
  });
  return { upstream, discovers: () => discovers };
}

Deno.test("http: -32022 listing 2026-07-28 gets one more server/discover; listing none of ours is discover_failed after one", async () => {
  {
    const { upstream, discovers } = versionUpstream(["2025-11-25", "2026-07-28"]);
    await using _ = upstream;
    await using bridge = new InProcessBridge([], upstream.url);
    ok("result" in await bridge.initialize(), bridge.stderr);
    strictEqual(discovers(), 2);
    strictEqual(await bridge.exit(), 0);
  }
  {
    const { upstream, discovers } = versionUpstream(["2099-01-01"]);
    await using _ = upstream;
    await using bridge = new InProcessBridge([], upstream.url);
    const error = errorOf(await bridge.initialize());
    strictEqual(error.code, -32022);
    deepStrictEqual(error.data, {
      cause: "discover_failed",
      detail: "Unsupported protocol version",
    });
    strictEqual(discovers(), 1);
    strictEqual(await bridge.exit(), 0);
  }
});

Deno.test("stdio: -32022 listing 2026-07-28 gets one more server/discover; listing none of ours is discover_failed", async () => {
  for (const [mode, works] of [["version", true], ["version_other", false]] as const) {
    await using bridge = new InProcessBridge([], RAW_SERVER(mode));
    await bridge.request(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    });
    const init = (await bridge.next())!;
    if (works) ok("result" in init, JSON.stringify(init));
    else strictEqual(errorOf(init).code, -32022);
  }
});
