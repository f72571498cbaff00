/**
 * The transport of the HTTP link and the bound of its own POSTs: a TLS
 * server that chooses no protocol in its handshake (it ignores ALPN) is
 * spoken to over HTTP/1.1, each request once; a server that never answers
 * the POST of a notification does not stall the link.
 *
 * And the bridge (`InProcessBridge`, the real wiring of the command line)
 * in front of hostile servers: a connection closed after the server read a
 * tools/call: the tool runs once, also on a reused idle connection.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHttpLink } from "../../lib/upstream/http.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import { fetchTransport, linkFetch } from "../../lib/http/post_transport.ts";
import { serveMcp, sse } from "../fixtures/http_raw.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { errorOf } from "../upstream/http_link_helpers.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { DISCOVER_RESULT, jsonResponse, serveTcp } from "../fixtures/raw_tcp.ts";
import { startDelayProxy } from "../fixtures/delay_proxy.ts";
import { waitFor } from "../wait.ts";

const certificates = await makeCertificates();

Deno.test("post transport: a TLS server without ALPN gets each request once over HTTP/1.1", async () => {
  const heads: string[] = [];
  await using server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      heads.push(request.head.split("\r\n", 1)[0]!);
      if (request.head.startsWith("PRI * HTTP/2.0")) {
        // A server of HTTP/1.1 only, as Python's http.server behind ssl answers the preface.
        await conn.write("HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      const m = request.message ?? {};
      const result = m.method === "server/discover" ? DISCOVER_RESULT : { content: [] };
      await conn.write(jsonResponse({ jsonrpc: "2.0", id: m.id, result }));
    }
  }, { cert: certificates.cert, key: certificates.key });
  const debug: string[] = [];
  const link = await createHttpLink({
    url: new URL(server.url),
    maxResponseBytes: 1 << 20,
    transport: fetchTransport({
      caCerts: [await Deno.readTextFile(certificates.caFile)],
      debug: (line) => debug.push(line),
    }),
  });
  const frames: UpstreamFrame[] = [];
  link.read((frame) => {
    frames.push(frame);
  });
  await link.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} });
  await waitFor("the discover result", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t" } });
  await waitFor("the call result", () => frames.length === 2);
  await link.close();
  deepStrictEqual(frames.map((f) => f.kind), ["message", "message"]);
  deepStrictEqual(heads, ["PRI * HTTP/2.0", "POST /mcp HTTP/1.1", "POST /mcp HTTP/1.1"]);
  ok(debug.some((line) => line.includes("HTTP/1.1")), debug.join("\n"));
});

Deno.test("http link: a notification POST that is never answered does not stall a stream with a server request", async () => {
  let hung = 0;
  await using upstream = serveMcp((m, request) => {
    if (m.method === "notifications/progress" || (m.id === "p1" && "result" in m)) {
      hung++;
      // Never answered while the client waits; given up when the client goes.
      return new Promise<Response>((resolve) =>
        request.signal.addEventListener("abort", () => resolve(new Response(null)))
      );
    }
    if (m.method === "tools/call") {
      return sse([
        { jsonrpc: "2.0", id: "p1", method: "ping" },
        { jsonrpc: "2.0", id: m.id, result: { content: [] } },
      ]);
    }
    return undefined;
  });
  const link = await createHttpLink({
    url: new URL(upstream.url),
    maxResponseBytes: 1 << 20,
    maxOwnPosts: 1,
    ownPostTimeoutMs: 200,
  });
  const frames: UpstreamFrame[] = [];
  link.read((frame) => {
    frames.push(frame);
    const value = frame.kind === "message" ? frame.value as Record<string, unknown> : undefined;
    // The client's answer to the ping, as the upstream client sends it.
    if (value?.method === "ping") {
      link.send({ jsonrpc: "2.0", id: value.id as string, result: {} });
    }
  });
  // A POST of the link's own that never gets its answer takes the one place.
  await link.send({ jsonrpc: "2.0", method: "notifications/progress", params: {} });
  await link.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "t" } });
  await waitFor(
    "the result after the ping",
    () => frames.some((f) => f.kind === "message" && (f.value as { id?: unknown }).id === 7),
  );
  strictEqual(hung >= 1, true);
  await link.close();
});

const ACCEPTED = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("http: a tools/call whose connection closes after the server read it runs once and fails, also on a reused idle connection", async () => {
  let calls = 0;
  await using server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      const m = request.message ?? {};
      if (m.method === "server/discover") {
        await conn.write(jsonResponse({ jsonrpc: "2.0", id: m.id, result: DISCOVER_RESULT }));
      } else if (m.method === "tools/call") {
        calls++;
        if (calls === 1) {
          await conn.write(jsonResponse({ jsonrpc: "2.0", id: m.id, result: { content: [] } }));
        } else {
          // The server read the call (the tool ran), then the connection dropped.
          conn.close();
          return;
        }
      } else await conn.write(ACCEPTED);
    }
  });
  await using bridge = new InProcessBridge([], server.url);
  ok("result" in await bridge.initialize(), bridge.stderr);
  await bridge.request(1, "tools/call", { name: "pay", arguments: {} });
  deepStrictEqual((await bridge.response(1)).result, { content: [] });
  // The connection of call 1 waits idle in the pool, as after the user's think time.
  await sleep(50);
  await bridge.request(2, "tools/call", { name: "pay", arguments: {} });
  deepStrictEqual(errorOf(await bridge.response(2)).data, { cause: "transport_failed" });
  // No retry of the call comes (asserted over 50 ms).
  await sleep(50);
  strictEqual(calls, 2, "each tools/call reached the server once");
  strictEqual(await bridge.exit(), 0);
});

Deno.test("http/1.1: connections are kept alive, one per request in flight, and an idle one is dropped before a server's keep-alive ends", async () => {
  await using server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      await sleep(Number(request.message?.ms ?? 0));
      await conn.write(jsonResponse({ ok: true }));
    }
  });
  const link = linkFetch({ poolIdleMs: 300 });
  const post = async (ms = 0) =>
    await (await link.fetch(server.url, { method: "POST", body: JSON.stringify({ ms }) })).json();
  try {
    for (let i = 0; i < 20; i++) await post();
    strictEqual(server.accepted(), 1, "20 calls in turn share one connection");
    await Promise.all(Array.from({ length: 8 }, () => post(100)));
    ok(server.accepted() <= 8, `8 calls at once opened ${server.accepted()} connections`);
    const before = server.accepted();
    await Promise.all(Array.from({ length: 8 }, () => post(100)));
    strictEqual(server.accepted(), before, "the next 8 reuse them");
    // Idle past the pool's time: the connection is closed by the bridge, not reused.
    await sleep(700);
    const open = server.accepted();
    await post();
    strictEqual(server.accepted(), open + 1);
  } finally {
    link.close();
  }
});

Deno.test("http/1.1: 64 requests in flight through a 20 ms round trip open 64 connections, none unused", async () => {
  // One HttpClient for every request opened up to 118 connections here, half never used: a
  // request that starts a connection keeps waiting for it while another one's comes back.
  const served: number[] = [];
  await using server = serveTcp(async (conn) => {
    const id = served.push(0) - 1;
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      if (request.head.startsWith("PRI * HTTP/2.0")) {
        await conn.write("HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      served[id]!++;
      await conn.write(jsonResponse({ ok: true }));
    }
  }, { cert: certificates.cert, key: certificates.key });
  const proxy = startDelayProxy(Number(new URL(server.url).port), 10);
  const url = `https://127.0.0.1:${proxy.port}/mcp`;
  const link = linkFetch({
    caCerts: [await Deno.readTextFile(certificates.caFile)],
    poolIdleMs: 300,
  });
  const post = async () => await (await link.fetch(url, { method: "POST", body: "{}" })).json();
  try {
    await post(); // HTTP/2 refused: HTTP/1.1 from then on
    for (let round = 0; round < 3; round++) {
      await sleep(500); // every connection idled out: the run opens its own
      const before = served.length;
      let next = 0;
      await Promise.all(Array.from({ length: 64 }, async () => {
        while (next++ < 600) await post();
      }));
      await sleep(200); // a connection still being made has come
      const opened = served.slice(before);
      deepStrictEqual(
        { opened: opened.length, unused: opened.filter((n) => n === 0).length },
        { opened: 64, unused: 0 },
        `round ${round}`,
      );
    }
  } finally {
    link.close();
    proxy.close();
  }
});
