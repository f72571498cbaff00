import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { assertHas, assertIncludes, assertSomeIncludes } from "../assert.ts";
import { streamFilter } from "../../lib/listen/listen_stream.ts";
import { FakeTime } from "../fake_time.ts";
import { RAW_SERVER } from "../process/helpers.ts";
import { waitFor } from "../wait.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { ChildStderr } from "../frontend/in_process_tools.ts";
import { inProcessTransport } from "../frontend/v1_client.ts";
import { server } from "../fixtures/modern_server.ts";
import { serveMcp } from "../fixtures/http_raw.ts";
import { SECRET_ARGS, SECRET_ENV } from "../upstream/http_link_helpers.ts";

Deno.test("stream filter: the declared lists and every subscribed URI", () => {
  deepStrictEqual(streamFilter(new Set(["tools", "resources"]), ["a", "b"]), {
    toolsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: ["a", "b"],
  });
});

type Obj = Record<string, unknown>;

Deno.test("lost streams: a new stream after each loss, for as long as they fail, the waits doubling to the maximum", async () => {
  await using t = new InProcessBridge(["--log-level", "debug"], RAW_SERVER("listen"), {
    limits: { listen_backoff_ms: 20, listen_max_backoff_ms: 40 },
  });
  await t.initialize();
  // The first stream and the next five end before their acknowledgment; the seventh lives.
  await t.call("n", "next_listen", { what: "end", count: 6 });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  deepStrictEqual((await t.next())?.method, "notifications/tools/list_changed");
  deepStrictEqual((await t.next())?.method, "notifications/prompts/list_changed");
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  strictEqual(((state.structuredContent as Obj).filters as unknown[]).length, 7);
  deepStrictEqual(
    t.logs.filter((l) => l.includes("a new stream opens in")).map((l) =>
      l.split(" in ").at(-1)!.trim()
    ),
    ["20 ms", "40 ms", "40 ms", "40 ms", "40 ms", "40 ms"],
  );
  ok(!t.logs.some((l) => l.includes("waiting for a change")), t.logs.join("\n"));
  strictEqual(await t.exit(), 0);
});

Deno.test("no acknowledgment in the limit: the stream is canceled and a new one opens after a wait", async () => {
  await using t = new InProcessBridge(["--log-level", "debug"], RAW_SERVER("listen"), {
    limits: { listen_backoff_ms: 20, listen_ack_timeout_ms: 100 },
  });
  await t.initialize();
  await t.call("n", "next_listen", { what: "silent" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The second stream acknowledges: one event per declared list.
  deepStrictEqual((await t.next())?.method, "notifications/tools/list_changed");
  deepStrictEqual((await t.next())?.method, "notifications/prompts/list_changed");
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  const s = state.structuredContent as Obj;
  deepStrictEqual([(s.filters as unknown[]).length, (s.cancelled as unknown[]).length], [2, 1]);
  assertSomeIncludes(t.logs, "no acknowledgment in 100 ms");
  strictEqual(await t.exit(), 0);
});

Deno.test("a stream that lives the healthy time after its acknowledgment resets the wait (fake time)", async () => {
  const time = new FakeTime();
  await using t = new InProcessBridge(["--log-level", "debug"], RAW_SERVER("listen"), {
    clock: time,
    limits: { listen_backoff_ms: 20, listen_max_backoff_ms: 1000, listen_healthy_ms: 300 },
  });
  await t.initialize();
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const acknowledged = async () =>
    deepStrictEqual([(await t.next())?.method, (await t.next())?.method], [
      "notifications/tools/list_changed",
      "notifications/prompts/list_changed",
    ]);
  await acknowledged(); // the events of the first acknowledgment
  const waits = () =>
    t.logs.filter((l) => l.includes("a new stream opens in")).map((l) =>
      l.split(" in ").at(-1)!.trim()
    );
  const lose = async (id: string) => {
    const before = waits().length;
    await t.call(id, "end_listens");
    // The new stream opens when the wait is over, and not before.
    await waitFor("the wait of the new stream", () => waits().length > before);
    const wait = time.pending.at(-1)!;
    await time.tick(wait - 1);
    strictEqual(waits().length, before + 1);
    await time.tick(1);
    await acknowledged(); // the events of the new stream's acknowledgment
  };
  await lose("a"); // short life: 20 ms
  await lose("b"); // short life: 40 ms
  await time.tick(300); // this stream lives the healthy time
  await lose("c");
  deepStrictEqual(waits(), ["20 ms", "40 ms", "20 ms"]);
  strictEqual(await t.exit(), 0);
});

// The listen stream (M3) on the wire: the bridge of the command line in process, a raw upstream.

const TOOLS_CHANGED = { jsonrpc: "2.0", method: "notifications/tools/list_changed" };
const PROMPTS_CHANGED = { jsonrpc: "2.0", method: "notifications/prompts/list_changed" };
const updated = (uri: string) => ({
  jsonrpc: "2.0",
  method: "notifications/resources/updated",
  params: { uri },
});

/** The bridge in process in front of the raw server in `mode` (a child), initialized. */
async function start(mode = "listen", command = RAW_SERVER(mode)): Promise<InProcessBridge> {
  const bridge = new InProcessBridge(["--log-level", "debug"], command);
  await bridge.initialize({}, true);
  return bridge;
}

async function listens(bridge: InProcessBridge, id: string): Promise<Obj> {
  const msgs = await bridge.call(id, "listens");
  return (msgs.at(-1)!.result as Obj).structuredContent as Obj;
}

Deno.test("the first stream: the filter of the declared lists, and one event per list at its acknowledgment", async () => {
  await using bridge = await start();
  deepStrictEqual([await bridge.next(), await bridge.next()], [TOOLS_CHANGED, PROMPTS_CHANGED]);
  const state = await listens(bridge, "l");
  deepStrictEqual(state.filters, [{
    toolsListChanged: true,
    promptsListChanged: true,
    resourceSubscriptions: [],
  }]);
  strictEqual(state.open, 1);
});

Deno.test("events: four methods only, without the subscription id; updated needs a uri; acks stay", async () => {
  await using bridge = await start();
  await bridge.next();
  await bridge.next();
  const msgs = await bridge.call(2, "emit", {
    events: [
      { method: "notifications/tools/list_changed", params: { _meta: { "com.example/k": 1 } } },
      { method: "notifications/resources/updated", params: {} },
      { method: "notifications/resources/updated", params: { uri: "x://a", title: "t" } },
      { method: "notifications/resources/list_changed" },
      { method: "notifications/cancelled", params: { requestId: 5 } },
      { method: "notifications/other" },
      { method: "notifications/subscriptions/acknowledged", params: { notifications: {} } },
      { method: "notifications/prompts/list_changed" },
    ],
  });
  deepStrictEqual(msgs.slice(0, -1), [
    {
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: { _meta: { "com.example/k": 1 } },
    },
    {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "x://a", title: "t" },
    },
    { jsonrpc: "2.0", method: "notifications/resources/list_changed" },
    // The second acknowledgment of the active stream closes a gap: one event per list.
    TOOLS_CHANGED,
    PROMPTS_CHANGED,
    PROMPTS_CHANGED,
  ]);
});

Deno.test("subscribe and unsubscribe: a new stream with all URIs, {} at its acknowledgment, the old one canceled", async () => {
  await using bridge = await start();
  await bridge.next();
  await bridge.next();
  await bridge.request(2, "resources/subscribe", { uri: "x://a" });
  deepStrictEqual(await bridge.until(2), [{ jsonrpc: "2.0", id: 2, result: {} }]);
  await bridge.request(3, "resources/subscribe", { uri: "x://a" }); // held: at once
  deepStrictEqual(await bridge.until(3), [{ jsonrpc: "2.0", id: 3, result: {} }]);
  await bridge.request(4, "resources/unsubscribe", { uri: "x://none" });
  deepStrictEqual(await bridge.until(4), [{ jsonrpc: "2.0", id: 4, result: {} }]);
  await bridge.request(5, "resources/subscribe", {});
  deepStrictEqual(((await bridge.until(5))[0]!.error as Obj).code, -32602);
  const state = await listens(bridge, "l");
  deepStrictEqual(state.filters, [
    { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: [] },
    { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["x://a"] },
  ]);
  deepStrictEqual([state.open, (state.cancelled as unknown[]).length], [1, 1]);
  // The new stream serves the updates of the URI.
  const msgs = await bridge.call(6, "emit", {
    events: [{ method: "notifications/resources/updated", params: { uri: "x://a" } }],
  });
  deepStrictEqual(msgs[0], updated("x://a"));
});

Deno.test("a change whose stream fails keeps the old stream and URIs and gives the upstream error", async () => {
  await using bridge = await start();
  await bridge.next();
  await bridge.next();
  await bridge.call(2, "next_listen", { what: "fail" });
  await bridge.request(3, "resources/subscribe", { uri: "x://b" });
  deepStrictEqual((await bridge.until(3)).at(-1), {
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32010, message: "no stream now" },
  });
  await bridge.call(4, "next_listen", { what: "end" });
  await bridge.request(5, "resources/subscribe", { uri: "x://b" });
  const error = (await bridge.until(5)).at(-1)!.error as Obj;
  deepStrictEqual(error.data, { cause: "invalid_response" });
  // The old stream still writes events; no URI was added.
  const msgs = await bridge.call(6, "emit", {
    events: [{ method: "notifications/tools/list_changed" }],
  });
  deepStrictEqual(msgs[0], TOOLS_CHANGED);
  const state = await listens(bridge, "l");
  deepStrictEqual((state.filters as Obj[]).map((f) => f.resourceSubscriptions), [[], ["x://b"], [
    "x://b",
  ]]);
});

Deno.test("a lost stream: a new one after a wait, with one event per list and per URI", async () => {
  await using bridge = await start();
  await bridge.next();
  await bridge.next();
  await bridge.request(2, "resources/subscribe", { uri: "x://a" });
  await bridge.until(2);
  await bridge.call(3, "end_listens");
  const gap = [await bridge.next(), await bridge.next(), await bridge.next()];
  deepStrictEqual(gap, [TOOLS_CHANGED, PROMPTS_CHANGED, updated("x://a")]);
  assertIncludes(bridge.stderr, "a new stream opens in 500 ms");
});

Deno.test("subscribe only: after the last unsubscribe the stream stops and none opens", async () => {
  await using bridge = await start("subonly");
  await bridge.request(2, "resources/subscribe", { uri: "x://a" });
  deepStrictEqual((await bridge.until(2)).at(-1), { jsonrpc: "2.0", id: 2, result: {} });
  await bridge.request(3, "resources/unsubscribe", { uri: "x://a" });
  deepStrictEqual((await bridge.until(3)).at(-1), { jsonrpc: "2.0", id: 3, result: {} });
  const state = await listens(bridge, "l");
  strictEqual(state.open, 0);
  deepStrictEqual((state.filters as Obj[]).map((f) => f.resourceSubscriptions), [[], ["x://a"]]);
});

Deno.test("order: a list change written before the result of a call reaches the client first, in 1,000 calls", async () => {
  await using bridge = await start();
  await bridge.next();
  await bridge.next();
  let events = 0;
  let responses = 0;
  // In batches below the limit of requests in flight.
  for (let start = 0; start < 1000; start += 100) {
    let batch = "";
    for (let i = start; i < start + 100; i++) {
      batch += JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: {
          name: "emit",
          arguments: { events: [{ method: "notifications/tools/list_changed" }] },
        },
      }) + "\n";
    }
    await bridge.writeRaw(batch);
    while (responses < start + 100) {
      const msg = await bridge.next();
      if (msg === null) throw new Error("stopped");
      if (msg.method === "notifications/tools/list_changed") events++;
      else {
        ok("result" in msg, JSON.stringify(msg));
        responses++;
        // Each call's event was written before its result: the n-th result comes after n events.
        strictEqual(
          events >= responses,
          true,
          `the event of call ${msg.id} came before its result`,
        );
      }
    }
  }
  strictEqual(responses, 1000);
});

Deno.test("the end of the input cancels the streams", async () => {
  // The raw server's stderr, which the process test reads in the bridge's stderr (inherited).
  using upstream = new ChildStderr(RAW_SERVER("listen"));
  await using bridge = await start("listen", upstream.command);
  await bridge.next();
  await bridge.next();
  strictEqual(await bridge.exit(), 0);
  match(bridge.stderr + upstream.text, /raw: cancelled \{"requestId":\d+/);
});

Deno.test("v1 client gets list changes and resource updates through resources/subscribe", async () => {
  const transport = inProcessTransport(RAW_SERVER("listen"));
  const client = new Client({ name: "vscode-like", version: "1" }, { capabilities: {} });
  const seen: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen.push("tools"));
  client.setNotificationHandler(
    PromptListChangedNotificationSchema,
    () => void seen.push("prompts"),
  );
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      seen.push(`updated ${n.params.uri}`);
    },
  );
  await client.connect(transport);
  try {
    await client.subscribeResource({ uri: "x://doc" });
    await client.callTool({
      name: "emit",
      arguments: {
        events: [{ method: "notifications/resources/updated", params: { uri: "x://doc" } }],
      },
    });
    await waitFor("three events", () => seen.length >= 3);
    deepStrictEqual(seen, ["tools", "prompts", "updated x://doc"]);
  } finally {
    await client.close();
  }
});

Deno.test("v1 client and an SDK v2 server: list changes and resource updates of a real listen stream", async () => {
  const transport = inProcessTransport(server);
  const client = new Client({ name: "vscode-like", version: "1" }, { capabilities: {} });
  const seen: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void seen.push("tools"));
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => {
      seen.push(`updated ${n.params.uri}`);
    },
  );
  await client.connect(transport);
  try {
    strictEqual(client.getServerCapabilities()?.resources?.subscribe, true);
    await waitFor("the events of the first acknowledgment", () => seen.includes("tools"));
    seen.length = 0;
    await client.subscribeResource({ uri: "fixture://readme" });
    await client.callTool({ name: "touch", arguments: { uri: "fixture://readme" } });
    await client.callTool({ name: "add_tool", arguments: { name: "fresh" } });
    await waitFor("two events", () => seen.length >= 2);
    deepStrictEqual(seen, ["updated fixture://readme", "tools"]);
    const tools = await client.listTools();
    assertHas(tools.tools.map((t: { name: string }) => t.name), "fresh");
    await client.unsubscribeResource({ uri: "fixture://readme" });
  } finally {
    await client.close();
  }
});

// After the last unsubscribe (spec M3, "Steps of a change of the subscriptions"): a server that
// declares resources.subscribe and no list change, a stream lost once (it ends with a result),
// then the last URI unsubscribed: the wait that the loss armed opens no stream, on each transport.

/** How a test drives one transport's upstream: its listen requests and the end of a stream. */
interface SubscribeOnly {
  readonly bridge: InProcessBridge;
  /** The resourceSubscriptions of each subscriptions/listen that the server got, in order. */
  listens(): Promise<unknown[]>;
  /** Ends every open stream with a result. */
  endStreams(): Promise<void>;
}

async function noStreamAfterLastUnsubscribe(
  time: FakeTime,
  upstream: SubscribeOnly,
): Promise<void> {
  const { bridge } = upstream;
  await bridge.initialize({}, true);
  await bridge.request(2, "resources/subscribe", { uri: "x://a" });
  deepStrictEqual(await bridge.response(2), { jsonrpc: "2.0", id: 2, result: {} });
  deepStrictEqual(await upstream.listens(), [[], ["x://a"]]);
  await upstream.endStreams();
  await waitFor("the wait after the loss", () => time.pending.includes(500));
  await bridge.request(3, "resources/unsubscribe", { uri: "x://a" });
  deepStrictEqual(await bridge.response(3), { jsonrpc: "2.0", id: 3, result: {} });
  // No timer is left, and no stream opens however long the bridge waits.
  deepStrictEqual(time.pending, []);
  await time.tick(120_000);
  deepStrictEqual(await upstream.listens(), [[], ["x://a"]]);
  // The next subscribe opens a stream again, without the events of a gap.
  await bridge.request(4, "resources/subscribe", { uri: "x://b" });
  deepStrictEqual(await bridge.until(4), [{ jsonrpc: "2.0", id: 4, result: {} }]);
  deepStrictEqual(await upstream.listens(), [[], ["x://a"], ["x://b"]]);
  strictEqual(await bridge.exit(), 0);
}

Deno.test("subscribe only over stdio: a stream lost before the last unsubscribe opens no new stream", async () => {
  const time = new FakeTime();
  await using bridge = new InProcessBridge(["--log-level", "debug"], RAW_SERVER("subonly"), {
    clock: time,
  });
  let id = 0;
  await noStreamAfterLastUnsubscribe(time, {
    bridge,
    listens: async () => {
      const { filters } = await listens(bridge, `listens-${++id}`);
      return (filters as Obj[]).map((filter) => filter.resourceSubscriptions);
    },
    endStreams: async () => void await bridge.call(`end-${++id}`, "end_listens"),
  });
});

Deno.test("subscribe only over HTTP: a stream lost before the last unsubscribe opens no new stream", async () => {
  const time = new FakeTime();
  const seen: unknown[] = [];
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const enc = new TextEncoder();
  const event = (controller: ReadableStreamDefaultController<Uint8Array>, message: unknown) =>
    controller.enqueue(enc.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
  await using upstream = serveMcp((m) => {
    if (m.method !== "subscriptions/listen") return undefined;
    const notifications = m.params?.notifications as Obj;
    seen.push(notifications.resourceSubscriptions);
    const _meta = { "io.modelcontextprotocol/subscriptionId": m.id };
    let stream!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stream = controller;
        open.add(controller);
        event(controller, {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { notifications, _meta },
        });
      },
      cancel: () => void open.delete(stream),
    });
    // Ended by the test: a result, then the end of the body.
    const end = () => {
      if (!open.delete(stream)) return;
      event(stream, { jsonrpc: "2.0", id: m.id, result: { resultType: "complete", _meta } });
      stream.close();
    };
    enders.push(end);
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, { resources: { subscribe: true } });
  const enders: (() => void)[] = [];
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, {
    env: SECRET_ENV,
    clock: time,
  });
  await noStreamAfterLastUnsubscribe(time, {
    bridge,
    listens: () => Promise.resolve([...seen]),
    endStreams: () => Promise.resolve(enders.splice(0).forEach((end) => end())),
  });
});

Deno.test({
  name:
    "an upstream that closes its stdin after its stream ended: one try to open a new stream, then none",
  ignore: Deno.build.os === "windows",
  async fn() {
    const SUB = "io.modelcontextprotocol/subscriptionId";
    const DISCOVER_LIST_CHANGED = {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: { listChanged: true } },
    };
    const lines = [
      { jsonrpc: "2.0", id: 1, result: DISCOVER_LIST_CHANGED },
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [SUB]: 2 } },
      },
      { jsonrpc: "2.0", id: 2, result: { resultType: "complete", _meta: { [SUB]: 2 } } },
    ].map((line) => `'${JSON.stringify(line)}'`);
    // server/discover, then the stream: acknowledged, the stdin closed, the stream ended.
    const script = `read discover; echo ${lines[0]}; read listen; echo ${lines[1]}; ` +
      `exec 0<&-; echo ${lines[2]}; exec sleep 30`;
    const time = new FakeTime();
    const flags = ["--log-level", "debug", "--stop-grace", "0.1"];
    await using bridge = new InProcessBridge(flags, ["sh", "-c", script], {
      clock: time,
    });
    await bridge.initialize({}, true);
    deepStrictEqual(await bridge.next(), TOOLS_CHANGED);
    const waits = () => bridge.logs.filter((l) => l.includes("a new stream opens in")).length;
    await waitFor("the wait after the end of the stream", () => waits() === 1);
    // The new stream cannot be written: the link can no longer send, and no stream opens again.
    await time.tick(500);
    await waitFor(
      "the end of the second stream",
      () =>
        bridge.logs.some((l) => l.includes("the next change of the subscriptions opens a new one")),
    );
    await time.tick(120_000);
    strictEqual(waits(), 1, bridge.logs.join("\n"));
    deepStrictEqual(time.pending, []);
    assertSomeIncludes(bridge.logs, "the upstream server closed its stdin");
    strictEqual(await bridge.exit(), 1);
  },
});
