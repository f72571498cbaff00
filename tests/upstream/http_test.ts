/**
 * The HTTP link in the same process against a real HTTP server on
 * 127.0.0.1: no token source, the close, no compression (the token source's
 * header and challenges are in tests/http/token_source_test.ts).
 *
 * And the bridge (`InProcessBridge`, the real wiring of the command line)
 * over the HTTP link: the POST of a request without an answer in its time
 * limit is aborted, redirects, the listen stream over SSE and the HTTP
 * status rows of its POST, and the link's own tools/list for the
 * `Mcp-Param` headers of a call.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { createHttpLink } from "../../lib/upstream/http.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { fetchTransport } from "../../lib/http/post_transport.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import { json, result, serveMcp, serveSilent } from "../fixtures/http_raw.ts";
import { serveRaw, serveSdk } from "../fixtures/http_upstream.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { FakeTime } from "../fake_time.ts";
import { waitFor } from "../wait.ts";
import {
  assertNoSecret,
  call,
  errorOf,
  openLink,
  SECRET_ARGS,
  SECRET_ENV,
} from "./http_link_helpers.ts";

Deno.test("http link: without a token source there is no nextSignIn; a closed link refuses to send", async () => {
  let release!: () => void;
  const held = new Promise<Response>((resolve) => release = () => resolve(json({})));
  await using upstream = serveMcp(() => held);
  const { link, frames } = await openLink(upstream.url);
  strictEqual(link.nextSignIn, undefined);
  strictEqual(link.isRemote, true);
  await call(link, 1);
  await waitFor("the request", () => upstream.seen.length === 1);
  await link.close();
  deepStrictEqual(await link.ended, { kind: "closed" });
  let refused = false;
  await call(link, 2).catch((error) => refused = error instanceof UpstreamFailure);
  strictEqual(refused, true);
  // The aborted request gives no frame, also when its answer comes later.
  release();
  await new Promise((resolve) => setTimeout(resolve, 50));
  strictEqual(frames.length, 0);
});

Deno.test("http link: no compression is asked for, and so fetch never decodes a gzip body past the limit (its Content-Length is the compressed one)", async () => {
  const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text: "a".repeat(300_000) } });
  const gzip = new Uint8Array(
    await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
  await using upstream = serveMcp(() =>
    new Response(gzip, {
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    })
  );
  for (const transport of [fetchTransport()]) {
    const link = await createHttpLink({
      url: new URL(upstream.url),
      maxResponseBytes: 100_000,
      transport,
    });
    const frames: UpstreamFrame[] = [];
    link.read((frame) => {
      frames.push(frame);
    });
    await call(link, 1);
    await waitFor("the failure", () => frames.length === 1);
    const failed = frames[0] as { kind: string; failure?: UpstreamFailure };
    strictEqual(failed.kind, "failed");
    strictEqual(failed.failure?.kind, "invalid_response");
    await link.close();
  }
  ok(upstream.seen.length === 1);
  ok(upstream.seen.every((r) => r.headers.get("accept-encoding") === "identity"));
});

Deno.test("http: a server that never answers: the time limit of server/discover, and the POST is aborted", async () => {
  await using upstream = serveSilent();
  await using bridge = new InProcessBridge(
    ["--discover-timeout", "0.3", ...SECRET_ARGS],
    upstream.url,
    { env: SECRET_ENV },
  );
  const error = errorOf(await bridge.initialize());
  deepStrictEqual(error.data, { cause: "discover_failed", detail: "no response in 300 ms" });
  // The cancellation is its own POST, and the connection of the request closes.
  const deadline = Date.now() + 5000;
  while (
    (upstream.closedUnanswered === 0 ||
      !upstream.requests.some((r) => r.includes('"notifications/cancelled"'))) &&
    Date.now() < deadline
  ) await new Promise((r) => setTimeout(r, 10));
  strictEqual(upstream.closedUnanswered, 1);
  ok(upstream.requests.some((r) => r.includes('"notifications/cancelled"')));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

Deno.test("http: a tools/list without an answer in --request-timeout gets timeout; its POST is aborted", async () => {
  await using upstream = serveSilent(undefined, true);
  await using bridge = new InProcessBridge(["--request-timeout", "0.3"], upstream.url);
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  const response = await bridge.response(1);
  deepStrictEqual((response.error as { data: unknown }).data, {
    cause: "timeout",
    detail: "method: tools/list, limit: 300 ms",
  });
  const deadline = Date.now() + 5000;
  while (upstream.closedUnanswered === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  strictEqual(upstream.closedUnanswered, 1);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("http: a 307 within the origin is followed; a redirect to another origin is not", async () => {
  await using other = serveMcp(() => undefined);
  await using upstream = serveMcp((m, request) => {
    if (m.method !== "tools/call") return undefined;
    const where = (m.params?.arguments as { where: string }).where;
    if (new URL(request.url).pathname === "/moved") {
      return result(m, { content: [{ type: "text", text: "moved here" }] });
    }
    const location = where === "same" ? "/moved" : other.url;
    return new Response(null, { status: 307, headers: { location } });
  });
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "x", arguments: { where: "same" } });
  deepStrictEqual((await bridge.response(1)).result, {
    content: [{ type: "text", text: "moved here" }],
  });
  const moved = upstream.seen.at(-1)!;
  strictEqual(moved.headers.get("authorization"), SECRET_ENV.TEST_TOKEN);
  await bridge.request(2, "tools/call", { name: "x", arguments: { where: "other" } });
  deepStrictEqual(errorOf(await bridge.response(2)).data, {
    cause: "transport_failed",
    detail: "HTTP status 307",
  });
  strictEqual(other.seen.length, 0, "the other origin got nothing");
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

Deno.test("http: each status row of the listen table", async () => {
  const rows: [number, "retry" | "stop"][] = [
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
    [501, "stop"],
    [401, "stop"],
    [403, "stop"],
    [404, "stop"],
    [400, "stop"],
  ];
  await Promise.all(rows.map(async ([status, row]) => {
    let listens = 0;
    await using upstream = serveMcp((m) => {
      if (m.method !== "subscriptions/listen") return undefined;
      listens++;
      return new Response("no", { status });
    }, { tools: { listChanged: true } });
    const time = new FakeTime();
    await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, {
      env: SECRET_ENV,
      clock: time,
    });
    await bridge.initialize();
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await waitFor("the first listen stream", () => listens >= 1, { timeoutMs: 10_000 });
    // The bridge saw the end of the stream (a retry row has armed its wait).
    await waitFor(
      "the end of the first stream",
      () => /listen stream 1 (ended|was refused)/.test(bridge.stderr),
      { timeoutMs: 10_000 },
    );
    // The first wait is 0.5 s: a retry row has its second stream then;
    // a stop row has none in three times that wait (fake time).
    await time.tick(row === "retry" ? 500 : 1500);
    if (row === "retry") {
      await waitFor("the second listen stream", () => listens >= 2, { timeoutMs: 10_000 });
    } else await new Promise((r) => setTimeout(r, 50));
    strictEqual(listens, row === "retry" ? 2 : 1, `status ${status}`);
    strictEqual(await bridge.exit(), 0);
    assertNoSecret(bridge.stdout + bridge.stderr);
    if (status === 401 || status === 403) {
      ok(bridge.stderr.includes("was refused; the next change opens a new one"), bridge.stderr);
    }
  }));
});

Deno.test("http: a listen stream over SSE gives the events; a notification POST gets 202", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method !== "subscriptions/listen") return undefined;
    const meta = { "io.modelcontextprotocol/subscriptionId": m.id };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const enc = new TextEncoder();
        const event = (msg: unknown) =>
          controller.enqueue(enc.encode(`event: message\ndata: ${JSON.stringify(msg)}\n\n`));
        event({
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { _meta: meta },
        });
        event({
          jsonrpc: "2.0",
          method: "notifications/tools/list_changed",
          params: { _meta: meta },
        });
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, { tools: { listChanged: true } });
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  await bridge.initialize();
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // One for the gap at the first acknowledgment, one for the event.
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

/** The secrets of the URL of the SDK upstream (it has no header of ours). */
const URL_SECRETS = ["secret-path", "sekrit-query"];

// With `--protocol auto` a 2026-07-28 upstream gets the modern path, unchanged.
for (const options of [[], ["--protocol", "auto"]]) {
  Deno.test(`http: list changes and resources/subscribe through the listen stream${options.length ? ` (${options.join(" ")})` : ""}`, () =>
    listenStream(options));
}

async function listenStream(options: string[]): Promise<void> {
  await using upstream = serveSdk();
  await using bridge = new InProcessBridge(options, upstream.url);
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
  await bridge.request(4, "tools/list", {});
  const tools = (await bridge.response(4)).result as { tools: { name: string }[] };
  ok(tools.tools.some((t) => t.name === "fresh"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr, URL_SECRETS);
  if (options.includes("auto")) ok(bridge.stderr.includes("info: revision 2026-07-28"));
}

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
  await using bridge = new InProcessBridge([], upstream.url);
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
  assertNoSecret(bridge.stderr, URL_SECRETS);
  await handler.close();
});
