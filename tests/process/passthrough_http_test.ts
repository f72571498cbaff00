/**
 * `--protocol auto` in front of a raw server of revision 2025-11-25 at a URL
 * (Deno.serve on 127.0.0.1): the sign of an older server, the session, the
 * GET stream, the DELETE at the end, a 404 for the session, and
 * `--max-response-bytes` on a JSON body and on one event of a stream.
 */

import { waitFor } from "../wait.ts";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  type LegacyHttpServer,
  type LegacyRequest,
  serveLegacy,
  SESSION,
} from "../fixtures/legacy_http_server.ts";
import { BridgeProcess } from "./helpers.ts";
import { startDelayProxy } from "../fixtures/delay_proxy.ts";

type Json = Record<string, unknown>;

const LIMIT = 2000;
const enc = new TextEncoder();

/**
 * A body that sends `head` and then never ends: only the client can stop it
 * (Deno cancels the stream when the connection goes).
 */
function endless(head: string): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.enqueue(enc.encode(head)) });
}

/** An SSE body of `events`; without `end` it stays open after them. */
function sse(events: unknown[], end: boolean): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const event of events) {
        controller.enqueue(enc.encode(`event: message\ndata: ${JSON.stringify(event)}\n\n`));
      }
      if (end) controller.close();
    },
  });
}

/** The tools of the limit checks: bodies over `LIMIT`, and a stream that ends too soon. */
function limitTools(name: string, id: unknown): Response | undefined {
  const result = (text: string) => ({
    jsonrpc: "2.0",
    id,
    result: { content: [{ type: "text", text }] },
  });
  const stream = { headers: { "content-type": "text/event-stream" } };
  switch (name) {
    case "big": {
      const head = JSON.stringify(result("x".repeat(LIMIT * 2))).slice(0, LIMIT + 500);
      return new Response(endless(head), { headers: { "content-type": "application/json" } });
    }
    case "big_event":
      return new Response(sse([result("y".repeat(LIMIT * 2))], false), stream);
    case "events": {
      // Each event under the limit, together over it.
      const progress = (n: number) => ({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "z".repeat(LIMIT / 2) + n },
      });
      return new Response(sse([progress(1), progress(2), result("done")], true), stream);
    }
    case "cut":
      return new Response(sse([], true), stream);
  }
  return undefined;
}

/** The POSTs that the server saw, with their messages. */
const postsOf = (upstream: LegacyHttpServer) =>
  upstream.requests.filter((r) => r.method === "POST") as (LegacyRequest & { message: Json })[];

async function call(bridge: BridgeProcess, id: string, name: string) {
  await bridge.request(id, "tools/call", { name, arguments: {} });
  return await bridge.response(id);
}

const causeOf = (response: Json) => (response.error as { data: Json } | undefined)?.data;

Deno.test("pass-through over HTTP: session, protocol version, GET stream, limits, DELETE at the end", async () => {
  await using upstream = serveLegacy({
    icons: [{ src: "https://example.com/i.png" }, { src: "data:image/png;base64,AA==" }],
    tool: limitTools,
  });
  await using bridge = new BridgeProcess(
    [
      "--protocol",
      "auto",
      "--max-response-bytes",
      String(LIMIT),
      "--header-env",
      "X-Key=KEY",
      upstream.url,
    ],
    { KEY: "key-value" },
  );
  const init = await bridge.initialize({ roots: {} });
  // The icon rule of a remote upstream: only the data: icon.
  deepStrictEqual(init.result, {
    protocolVersion: "2025-06-18",
    capabilities: { tools: {} },
    serverInfo: { name: "raw-http", version: "1", icons: [{ src: "data:image/png;base64,AA==" }] },
  });
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  deepStrictEqual((await call(bridge, "c-1", "echo")).result, {
    content: [{ type: "text", text: "called echo" }],
  });
  // The GET stream was asked for after initialized; 405 is a server without one.
  await waitFor("the GET stream", () => upstream.requests.some((r) => r.method === "GET"));

  // A JSON body over the limit fails at once, though the body never ends.
  const big = await call(bridge, "c-2", "big");
  deepStrictEqual(causeOf(big), { cause: "invalid_response", detail: "HTTP status 200" });
  // One event over the limit fails the request at once too.
  const bigEvent = await call(bridge, "c-3", "big_event");
  deepStrictEqual(causeOf(bigEvent), { cause: "invalid_response", detail: "HTTP status 200" });
  // The limit is per event: events under it pass, together over it.
  const events = await call(bridge, "c-4", "events");
  deepStrictEqual(events.result, { content: [{ type: "text", text: "done" }] });
  strictEqual(bridge.queued.filter((m) => m.method === "notifications/message").length, 2);
  // A stream that ends without the response.
  strictEqual(causeOf(await call(bridge, "c-5", "cut"))?.cause, "transport_failed");
  // The link goes on after each failure.
  ok((await call(bridge, "c-6", "echo")).result);
  strictEqual(await bridge.exit(), 0);

  // The sign: the body of the one refused server/discover (no second POST); then
  // initialize without a session.
  const posts = postsOf(upstream);
  const methods = posts.map((p) => p.message.method ?? "response");
  deepStrictEqual(methods.slice(0, 2), ["server/discover", "initialize"]);
  strictEqual(posts[1]!.headers.get("mcp-session-id"), null);
  for (const post of posts.slice(2)) {
    strictEqual(post.headers.get("mcp-session-id"), SESSION);
    strictEqual(post.headers.get("mcp-protocol-version"), "2025-06-18");
    strictEqual(post.headers.get("x-key"), "key-value");
    strictEqual(post.headers.get("accept-encoding"), "identity");
  }
  // The params of initialize: the client's, less tasks.
  deepStrictEqual(posts[1]!.message.params, {
    protocolVersion: "2025-11-25",
    capabilities: { roots: {} },
    clientInfo: { name: "raw-test", version: "1" },
  });
  // The DELETE of the session at the end of the input.
  const deletes = upstream.requests.filter((r) => r.method === "DELETE");
  strictEqual(deletes.length, 1);
  strictEqual(deletes[0]!.headers.get("mcp-session-id"), SESSION);
  ok(!bridge.stderr.includes(upstream.url), "the URL is never logged");
});

Deno.test("pass-through over HTTP: a 404 for the session fails that request with closed; a new session takes the next", async () => {
  await using upstream = serveLegacy();
  await using bridge = new BridgeProcess(["--protocol", "auto", upstream.url]);
  await bridge.initialize({});
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  ok((await call(bridge, "c-1", "expire")).result);
  deepStrictEqual(causeOf(await call(bridge, "c-2", "echo")), {
    cause: "closed",
    detail: "HTTP status 404",
  });
  // The info line comes once the new session is ready.
  await waitFor("the new session", () => bridge.stderr.includes("a new session"));
  const later = await call(bridge, "c-3", "echo");
  deepStrictEqual(later.result, { content: [{ type: "text", text: "called echo" }] });
  // The same initialize params, and each request sent once.
  const initializes = postsOf(upstream).filter((p) => p.message.method === "initialize");
  deepStrictEqual(initializes[1]!.message.params, initializes[0]!.message.params);
  const calls = postsOf(upstream).filter((p) => p.message.method === "tools/call");
  deepStrictEqual(calls.map((p) => (p.message.params as Json).name), ["expire", "echo", "echo"]);
  strictEqual(new Set(calls.map((p) => p.message.id)).size, 3, "no request sent twice");
  await bridge.closeInput();
  strictEqual(await bridge.exit(), 0);
  const lines = bridge.stderr.split("\n").filter((line) => line.includes("a new session"));
  deepStrictEqual(lines.map((line) => line.replace(/^\[[^\]]*\] /, "")), [
    "info: a new session of the upstream server started: it did not know the session (HTTP status 404)",
  ]);
  ok(!bridge.stderr.includes(upstream.url), "the URL is never logged");
});

Deno.test("auto over HTTP: a 404 whose body is not JSON-RPC and asks for no session stays discover_failed", async () => {
  await using upstream = serveLegacy({ noSession: "html404" });
  await using bridge = new BridgeProcess(["--protocol", "auto", upstream.url]);
  const init = await bridge.initialize({});
  deepStrictEqual(causeOf(init), { cause: "discover_failed", detail: "HTTP status 404" });
  strictEqual(postsOf(upstream).filter((p) => p.message.method === "initialize").length, 0);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("pass-through over HTTP/1.1: 100 calls and notifications in turn share one connection (every response's connection comes back)", async () => {
  await using upstream = serveLegacy({ getStream: true });
  // A proxy without delay that counts the connections the bridge opens.
  const proxy = startDelayProxy(Number(new URL(upstream.url).port), 0);
  const url = new URL(upstream.url);
  url.port = String(proxy.port);
  try {
    await using bridge = new BridgeProcess(["--protocol", "auto", url.href]);
    await bridge.initialize();
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await waitFor("the GET stream", () => upstream.streams() === 1);
    const before = proxy.connections();
    for (let i = 0; i < 50; i++) {
      deepStrictEqual((await call(bridge, `c-${i}`, "echo")).result, {
        content: [{ type: "text", text: "called echo" }],
      });
      await bridge.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    }
    // The GET stream holds one connection; the calls and the notifications (each answered with
    // a 202 whose body the transport drops) share one or two others.
    ok(proxy.connections() - before <= 2, `${proxy.connections() - before} new connections`);
  } finally {
    proxy.close();
  }
});
