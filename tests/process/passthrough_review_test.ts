/**
 * `--protocol auto` in front of a raw server of revision 2025-11-25 at a URL
 * that holds what it sends: an SSE stream left open after the response of
 * its request, an endless error body, and a 202 to a request. The
 * connections stay bounded, an error body is read only as far as its
 * limit, and each request gets its one answer at once.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { startDelayProxy } from "../fixtures/delay_proxy.ts";
import { waitFor } from "../wait.ts";
import { BridgeProcess } from "./helpers.ts";

const enc = new TextEncoder();

type Json = Record<string, unknown>;

const causeOf = (response: Json) => (response.error as { data?: Json } | undefined)?.data;

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

Deno.test("auto over HTTP/1.1: an SSE stream that the server leaves open after the response ends there; 30 calls in turn hold at most 2 connections", async () => {
  let streams = 0;
  await using upstream = serveLegacy({
    tool: (_name, id) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          streams++;
          controller.enqueue(enc.encode(event({ jsonrpc: "2.0", id, result: { content: [] } })));
          // Never closed: only the client can end it.
        },
        cancel: () => void streams--,
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  // A proxy without delay that counts the connections the bridge holds.
  const proxy = startDelayProxy(Number(new URL(upstream.url).port), 0);
  const url = new URL(upstream.url);
  url.port = String(proxy.port);
  try {
    await using bridge = new BridgeProcess([
      "--protocol",
      "auto",
      "--log-level",
      "debug",
      url.href,
    ]);
    await bridge.initialize({}, true);
    for (let i = 0; i < 30; i++) {
      await bridge.request(`c-${i}`, "tools/call", { name: "open", arguments: {} });
      deepStrictEqual((await bridge.response(`c-${i}`)).result, { content: [] });
    }
    // The connection of each stream closes once its response came.
    await waitFor("the streams to close", () => proxy.open() <= 2 && streams <= 1);
    ok(proxy.open() <= 2, `${proxy.open()} connections open`);
    // The SDK's transport read the end of each stream as the end of an answered request.
    ok(!bridge.stderr.includes("reported an error"), bridge.stderr);
    await bridge.closeInput();
    strictEqual(await bridge.exit(), 0);
  } finally {
    proxy.close();
  }
});

/** An endless body of `type` with `status`; `sent` counts its bytes. */
function endlessBody(status: number, type: string, sent: { bytes: number }): Response {
  const chunk = enc.encode(
    type === "text/event-stream" ? ": x\n\n".repeat(10_000) : "x".repeat(65_536),
  );
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      sent.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return new Response(body, { status, headers: { "content-type": type } });
}

Deno.test("auto over HTTP: an error status with an endless body fails its request at once with the status, the body read no further than its head; a JSON-RPC error's message comes first", async () => {
  const sent = { bytes: 0 };
  await using upstream = serveLegacy({
    tool: (name) => {
      if (name === "text") return endlessBody(500, "text/plain", sent);
      if (name === "sse") return endlessBody(500, "text/event-stream", sent);
      if (name === "json") {
        return Response.json(
          { jsonrpc: "2.0", id: null, error: { code: -32603, message: "boom" } },
          {
            status: 503,
          },
        );
      }
      return undefined;
    },
  });
  await using bridge = new BridgeProcess(["--protocol", "auto", upstream.url]);
  await bridge.initialize({}, true);
  for (const name of ["text", "sse"]) {
    sent.bytes = 0;
    await bridge.request(name, "tools/call", { name, arguments: {} });
    const answer = await bridge.response(name, 10_000);
    const at = sent.bytes;
    deepStrictEqual(causeOf(answer), { cause: "transport_failed", detail: "HTTP status 500" });
    ok(at < 16 * 1024 * 1024, `${at} bytes sent before the failure`);
  }
  await bridge.request("json", "tools/call", { name: "json", arguments: {} });
  deepStrictEqual(causeOf(await bridge.response("json")), {
    cause: "transport_failed",
    detail: "boom (HTTP status 503)",
  });
  // The session lives on.
  await bridge.request("echo", "tools/call", { name: "echo", arguments: {} });
  deepStrictEqual((await bridge.response("echo")).result, {
    content: [{ type: "text", text: "called echo" }],
  });
  await bridge.closeInput();
  strictEqual(await bridge.exit(), 0);
});

Deno.test("auto over HTTP: a 202 to a request fails it at once with invalid_response and the status; a notification's 202 is its answer", async () => {
  await using upstream = serveLegacy({
    tool: (name) => name === "accepted" ? new Response(null, { status: 202 }) : undefined,
  });
  await using bridge = new BridgeProcess(["--protocol", "auto", upstream.url]);
  await bridge.initialize({}, true);
  const started = Date.now();
  await bridge.request("a", "tools/call", { name: "accepted", arguments: {} });
  deepStrictEqual(causeOf(await bridge.response("a", 5_000)), {
    cause: "invalid_response",
    detail: "HTTP status 202",
  });
  ok(Date.now() - started < 3_000, `${Date.now() - started} ms`);
  await bridge.send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
  await bridge.request("echo", "tools/call", { name: "echo", arguments: {} });
  deepStrictEqual((await bridge.response("echo")).result, {
    content: [{ type: "text", text: "called echo" }],
  });
  await bridge.closeInput();
  strictEqual(await bridge.exit(), 0);
});

Deno.test("auto over HTTP: a POST's stream that ends after an event id without its response fails the request; no resumption GET (Last-Event-ID) goes out", async () => {
  await using upstream = serveLegacy({
    tool: (name) => {
      if (name !== "primed") return undefined;
      const note = {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "x" },
      };
      const body = `id: e1\nretry: 10\n${event(note)}`;
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  await using bridge = new BridgeProcess(["--protocol", "auto", upstream.url]);
  await bridge.initialize({}, true);
  await bridge.request("p", "tools/call", { name: "primed", arguments: {} });
  deepStrictEqual(causeOf(await bridge.response("p")), {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  // The SDK would resume after the server's retry of 10 ms.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const resumptions = upstream.requests.filter((r) => r.headers.has("last-event-id"));
  strictEqual(resumptions.length, 0);
  await bridge.closeInput();
  strictEqual(await bridge.exit(), 0);
});
