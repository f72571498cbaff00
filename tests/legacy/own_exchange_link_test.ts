/**
 * The own-exchange filter of the 2025-11-25 link (`lib/legacy/own_exchange.ts`)
 * with the SDK's own SSE parser behind it, through the real link: an own
 * response whose event ends in a CR (CR line ends, or a CRLF that the
 * chunks split) still reaches the client although the filter ends the
 * stream after it; an event with an empty `event:` field is a `message`, so
 * a foreign response in it is dropped.
 */

import { deepStrictEqual } from "node:assert/strict";
import { connectLegacyHttp } from "../../lib/legacy/http_link.ts";
import type { Message } from "../../lib/jsonrpc/message.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import { waitFor } from "../wait.ts";

const enc = new TextEncoder();
const INITIALIZE: Message = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  },
};
const SERVER_INFO = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "s", version: "1" },
};

/** A 2025-11-25 server on 127.0.0.1 whose POSTs answer with `respond` (the GET stream: 405). */
function serve(
  respond: (
    message: { id: number; method: string; params?: { name?: string } },
  ) => Promise<Uint8Array[]>,
) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message = await request.json();
    if (!("id" in message)) return new Response(null, { status: 202 });
    const chunks = await respond(message);
    // The stream stays open after its chunks: the filter ends it.
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const chunk of chunks) {
          controller.enqueue(chunk);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "mcp-session-id": "S1" },
    });
  });
}

async function open(url: string) {
  const link = await connectLegacyHttp({ url: new URL(url), maxResponseBytes: 1 << 20 });
  const frames: UpstreamFrame[] = [];
  link.read((frame) => void frames.push(frame));
  return { link, frames };
}

for (
  const [name, split] of [
    ["CR line ends", (data: string) => [`data: ${data}\r\r`]],
    ["a CRLF split by the chunks", (data: string) => [`data: ${data}\r\n\r`, "\n"]],
    ["LF line ends", (data: string) => [`data: ${data}\n\n`]],
  ] as const
) {
  Deno.test(`own exchange: the own response of a stream left open reaches the client (${name})`, async () => {
    await using server = serve((message) => {
      const data = JSON.stringify({ jsonrpc: "2.0", id: message.id, result: SERVER_INFO });
      return Promise.resolve(split(data).map((text) => enc.encode(text)));
    });
    const { link, frames } = await open(`http://127.0.0.1:${server.addr.port}/mcp`);
    await link.send(INITIALIZE);
    await waitFor("the answer", () => frames.length === 1);
    deepStrictEqual(frames[0], {
      kind: "message",
      value: { jsonrpc: "2.0", id: 1, result: SERVER_INFO },
    });
    await link.close();
  });
}

Deno.test("own exchange: a foreign response in an event with an empty type is dropped; each request gets its own", async () => {
  const event = (message: unknown, field = "") =>
    enc.encode(`${field}data: ${JSON.stringify(message)}\n\n`);
  await using server = serve(async (message) => {
    if (message.method === "initialize") {
      return [event({ jsonrpc: "2.0", id: message.id, result: SERVER_INFO })];
    }
    if (message.params?.name === "slow") {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return [
        event({
          jsonrpc: "2.0",
          id: message.id,
          result: { content: [{ type: "text", text: "real" }] },
        }),
      ];
    }
    return [
      event(
        { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "stolen" }] } },
        "event:\n",
      ),
      event({ jsonrpc: "2.0", id: message.id, result: { content: [] } }),
    ];
  });
  const { link, frames } = await open(`http://127.0.0.1:${server.addr.port}/mcp`);
  await link.send(INITIALIZE);
  await waitFor("the initialize answer", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await link.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow" } });
  await new Promise((resolve) => setTimeout(resolve, 30));
  await link.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "fast" } });
  await waitFor("both answers", () => frames.length === 3, { timeoutMs: 3_000 });
  const answers = frames.slice(1).map((f) => f.kind === "message" ? f.value : f);
  deepStrictEqual(answers, [
    { jsonrpc: "2.0", id: 3, result: { content: [] } },
    { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "real" }] } },
  ]);
  await link.close();
});
