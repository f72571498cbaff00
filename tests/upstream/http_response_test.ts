/**
 * The HTTP link against hostile servers on 127.0.0.1, in the same process:
 * a response counts only on its own exchange, bytes on an idle connection
 * never become the next response, an HTTP/1.0 response with a chunked
 * body is refused, an error body's message reaches the failure, and the
 * POSTs of answers are bounded.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import { json, serveMcp, sse } from "../fixtures/http_raw.ts";
import { jsonResponse, serveTcp } from "../fixtures/raw_tcp.ts";
import { waitFor } from "../wait.ts";
import { call, openLink } from "./http_link_helpers.ts";

/** The frame of request `id`: a message with its value, or a failure with its kind. */
function frameOf(frames: UpstreamFrame[], id: number): unknown {
  for (const frame of frames) {
    if (frame.kind === "message" && (frame.value as { id?: unknown }).id === id) {
      return (frame.value as { result?: unknown; error?: unknown }).result ??
        (frame.value as { error?: unknown }).error;
    }
    if (frame.kind === "failed" && frame.id === id) return (frame.failure as UpstreamFailure).kind;
  }
  return undefined;
}

Deno.test("http exchange: a JSON body with another request's id settles neither; the other request keeps its own answer", async () => {
  let releaseB!: () => void;
  const bAnswered = new Promise<void>((resolve) => releaseB = resolve);
  await using upstream = serveMcp(async (m) => {
    if (m.id === 1) return json({ jsonrpc: "2.0", id: 2, result: { forged: true } });
    await bAnswered;
    return json({ jsonrpc: "2.0", id: 2, result: { real: true } });
  });
  const debug: string[] = [];
  const { link, frames } = await openLink(upstream.url, { debug: (line) => debug.push(line) });
  await call(link, 2);
  await call(link, 1);
  await waitFor("the failure of 1", () => frameOf(frames, 1) !== undefined);
  strictEqual(frameOf(frames, 1), "invalid_response");
  strictEqual(frameOf(frames, 2), undefined);
  releaseB();
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 2), { real: true });
  strictEqual(frames.length, 2);
  ok(debug.some((line) => line.includes("another request")), debug.join("\n"));
  await link.close();
});

Deno.test("http exchange: an SSE stream with another request's response drops it and goes on", async () => {
  let releaseB!: () => void;
  const bAnswered = new Promise<void>((resolve) => releaseB = resolve);
  await using upstream = serveMcp(async (m) => {
    if (m.id === 1) {
      return sse([
        { jsonrpc: "2.0", id: 2, result: { forged: true } },
        { jsonrpc: "2.0", id: 1, result: { one: true } },
      ]);
    }
    await bAnswered;
    return sse([{ jsonrpc: "2.0", id: 2, result: { real: true } }]);
  });
  const { link, frames } = await openLink(upstream.url);
  await call(link, 2);
  await call(link, 1);
  await waitFor("the answer of 1", () => frameOf(frames, 1) !== undefined);
  deepStrictEqual(frameOf(frames, 1), { one: true });
  strictEqual(frameOf(frames, 2), undefined);
  releaseB();
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 2), { real: true });
  strictEqual(frames.length, 2);
  await link.close();
});

Deno.test("http exchange: bytes that come on an idle connection never become the next response", async () => {
  const forged = Promise.withResolvers<void>();
  await using server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      const id = request.message?.id;
      await conn.write(jsonResponse({ jsonrpc: "2.0", id, result: { real: id } }));
      if (id === 1) {
        // A whole response that nobody asked for, on the idle connection.
        await new Promise((resolve) => setTimeout(resolve, 50));
        await conn.write(jsonResponse({ jsonrpc: "2.0", id: 2, result: { forged: true } }));
        forged.resolve();
      }
    }
  });
  const { link, frames } = await openLink(server.url);
  await call(link, 1);
  await waitFor("the answer of 1", () => frameOf(frames, 1) !== undefined);
  // The forged bytes are on the idle connection before the next request.
  await forged.promise;
  await new Promise((resolve) => setTimeout(resolve, 20));
  await call(link, 2);
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 1), { real: 1 });
  deepStrictEqual(frameOf(frames, 2), { real: 2 });
  await link.close();
});

Deno.test("http exchange: an HTTP/1.0 response with Transfer-Encoding chunked is refused", async () => {
  await using server = serveTcp(async (conn) => {
    const request = await conn.read();
    if (!request) return;
    const body = JSON.stringify({ jsonrpc: "2.0", id: request.message?.id, result: { ok: 1 } });
    await conn.write(
      "HTTP/1.0 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n" +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    conn.close();
  });
  const { link, frames } = await openLink(server.url);
  await call(link, 1);
  await waitFor("the failure", () => frames.length === 1);
  strictEqual(frameOf(frames, 1), "transport_failed");
  await link.close();
});

Deno.test("http exchange: an error status with a JSON-RPC error body keeps the upstream message and the status", async () => {
  await using upstream = serveMcp((m) =>
    m.id === 1
      ? json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad\nsession" } }, 404)
      : json(
        { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } },
        400,
      )
  );
  const { link, frames } = await openLink(upstream.url);
  await call(link, 1);
  await call(link, 2);
  await waitFor("both", () => frames.length === 2);
  const failed = frames.find((f) => f.kind === "failed") as { failure: UpstreamFailure };
  strictEqual(failed.failure.kind, "transport_failed");
  strictEqual(failed.failure.status, 404);
  strictEqual(failed.failure.upstreamMessage, "Bad session");
  // A 400 with the error of the request itself is that error.
  deepStrictEqual(frameOf(frames, 2), { code: -32601, message: "Method not found" });
  await link.close();
});

Deno.test("http response: an error status with an HTML page that names a session is no sign of an older server; an SSE body of an error is not read", async () => {
  const { readRequestResponse } = await import("../../lib/upstream/http_response.ts");
  const options = {
    id: 1,
    limit: 1 << 20,
    mayRetry: false,
    deliver: () => {},
    serverRequest: () => Promise.resolve(),
  };
  const failureOf = (response: Response) =>
    readRequestResponse(response, options).then(() => undefined, (error) => error);
  const html = await failureOf(
    new Response("<html>your session expired</html>", {
      status: 404,
      headers: { "content-type": "text/html" },
    }),
  );
  strictEqual(html.status, 404);
  strictEqual(html.errorBody, undefined);
  const plain = await failureOf(
    new Response("Bad Request: No valid session ID provided", {
      status: 400,
      headers: { "content-type": "text/plain" },
    }),
  );
  strictEqual(plain.errorBody, "asks_for_session");
  // A stream that never ends: the failure comes at once, the body is cancelled.
  let cancelled = false;
  const open = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("data: {}\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const stream = await failureOf(
    new Response(open, { status: 500, headers: { "content-type": "text/event-stream" } }),
  );
  strictEqual(stream.status, 500);
  strictEqual(cancelled, true);
});
