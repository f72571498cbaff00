/**
 * The real bridge in front of hostile and strict HTTP upstreams on
 * 127.0.0.1: a connection closed after the server read a tools/call (the
 * tool runs once), a flood of pings on a stream (the connections stay
 * bounded, the client's calls are served), version negotiation (SEP-2575)
 * over HTTP and stdio, and the upstream's message in `data.detail`.
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { UrlBridge } from "../fixtures/http_bridge.ts";
import { json, type RawMessage, result, serveMcp } from "../fixtures/http_raw.ts";
import { DISCOVER_RESULT, jsonResponse, serveTcp } from "../fixtures/raw_tcp.ts";
import { BridgeProcess, RAW_SERVER } from "./helpers.ts";

const ACCEPTED = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function errorOf(msg: Record<string, unknown>): { code: number; data?: Record<string, unknown> } {
  ok("error" in msg, JSON.stringify(msg));
  return msg.error as { code: number; data?: Record<string, unknown> };
}

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
  await using bridge = new UrlBridge([server.url]);
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

Deno.test("http: a flood of 3,000 pings on the listen stream never has more than 256 connections open; a call is served meanwhile", async () => {
  const PINGS = 3000;
  let open = 0;
  let maxOpen = 0;
  let answered = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const m = JSON.parse(body) as RawMessage & { result?: unknown };
    const send = (value: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (m.method === "server/discover") {
      return send({
        jsonrpc: "2.0",
        id: m.id,
        result: { ...DISCOVER_RESULT, capabilities: { tools: { listChanged: true } } },
      });
    }
    if (m.method === "subscriptions/listen") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const meta = { "io.modelcontextprotocol/subscriptionId": m.id };
      const event = (msg: unknown) => `event: message\ndata: ${JSON.stringify(msg)}\n\n`;
      res.write(event({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: meta },
      }));
      for (let i = 0; i < PINGS; i++) {
        if (!res.write(event({ jsonrpc: "2.0", id: `p${i}`, method: "ping" }))) {
          await new Promise((resolve) => res.once("drain", resolve));
        }
      }
      return; // the stream stays open
    }
    if (m.method === "tools/call") {
      return send({
        jsonrpc: "2.0",
        id: m.id,
        result: { content: [{ type: "text", text: "ok" }] },
      });
    }
    if (typeof m.id === "string" && m.id.startsWith("p") && "result" in m) {
      await sleep(5);
      answered++;
    }
    res.writeHead(202);
    res.end();
  });
  server.on("connection", (socket) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    socket.on("close", () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  try {
    await using bridge = new UrlBridge([url]);
    ok("result" in await bridge.initialize(), bridge.stderr);
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    while (answered < PINGS / 3) await sleep(20);
    await bridge.request(1, "tools/call", { name: "x", arguments: {} });
    deepStrictEqual((await bridge.response(1)).result, {
      content: [{ type: "text", text: "ok" }],
    });
    const deadline = Date.now() + 60_000;
    while (answered < PINGS && Date.now() < deadline) await sleep(50);
    strictEqual(answered, PINGS, "every ping got its answer");
    strictEqual(await bridge.exit(), 0);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  ok(maxOpen <= 256, `${maxOpen} connections were open at once`);
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
    await using bridge = new UrlBridge([upstream.url]);
    ok("result" in await bridge.initialize(), bridge.stderr);
    strictEqual(discovers(), 2);
    strictEqual(await bridge.exit(), 0);
  }
  {
    const { upstream, discovers } = versionUpstream(["2099-01-01"]);
    await using _ = upstream;
    await using bridge = new UrlBridge([upstream.url]);
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
    await using bridge = new BridgeProcess([], RAW_SERVER(mode));
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

Deno.test("http: an error status whose body is a JSON-RPC error has the upstream message and the status in data.detail", async () => {
  await using upstream = serveMcp((m) =>
    m.method === "tools/call"
      ? json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Session expired" } }, 404)
      : undefined
  );
  await using bridge = new UrlBridge([upstream.url]);
  ok("result" in await bridge.initialize(), bridge.stderr);
  await bridge.request(1, "tools/call", { name: "x", arguments: {} });
  deepStrictEqual(errorOf(await bridge.response(1)).data, {
    cause: "transport_failed",
    detail: "Session expired (HTTP status 404)",
  });
  strictEqual(await bridge.exit(), 0);
});
