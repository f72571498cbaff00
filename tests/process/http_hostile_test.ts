/**
 * The real program in front of a hostile HTTP upstream on 127.0.0.1: a
 * flood of pings on a stream; the connections that the process opens stay
 * bounded and the client's calls are served. It stays a process: in the
 * test's own process the server and the bridge share one thread, and the
 * test took more CPU and twice the time. The other hostile servers meet the
 * bridge in process (tests/upstream/).
 */

import http from "node:http";
import type { AddressInfo } from "node:net";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { RawMessage } from "../fixtures/http_raw.ts";
import { DISCOVER_RESULT } from "../fixtures/raw_tcp.ts";
import { BridgeProcess } from "./helpers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    await using bridge = new BridgeProcess([url]);
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
