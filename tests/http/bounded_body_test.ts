/**
 * The bounded reads of a body: a whole body of at most a limit, and a body
 * of a known length. And the bridge (`InProcessBridge`, the real wiring of
 * the command line) in front of a raw upstream: a body or an event one byte
 * over `--max-response-bytes`, a large body of a known length, one cut short.
 */

import { readJsonBody } from "../../lib/http/bounded_body.ts";
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { readBounded, readKnownLength, TooLargeError } from "../../lib/http/bounded_body.ts";
import { type RawMessage, serveMcp } from "../fixtures/http_raw.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { assertNoSecret, errorOf, SECRET_ARGS, SECRET_ENV } from "../upstream/http_link_helpers.ts";

const enc = new TextEncoder();

/** A body of the given chunks (strings or bytes). */
function body(...chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? enc.encode(c) : c));
}

Deno.test("bounded bodies: exactly the limit is read, one more byte throws", async () => {
  strictEqual((await readBounded(body("12", "345"), 5)).length, 5);
  await rejects(readBounded(body("12", "3456"), 5), TooLargeError);
});

/** A byte stream (as a fetch body is) or a plain stream that gives `chunks`. */
function bodyOf(chunks: Uint8Array[], bytes: boolean): ReadableStream<Uint8Array> {
  let i = 0;
  if (!bytes) return ReadableStream.from(chunks);
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk.slice());
      else {
        controller.close();
        controller.byobRequest?.respond(0);
      }
    },
  });
}

Deno.test("readKnownLength: the body in one buffer of its length, in place or copied; short and long bodies fail", async () => {
  const part = (n: number, byte: number) => new Uint8Array(n).fill(byte);
  for (const bytes of [true, false]) {
    const what = bytes ? "a byte stream" : "a plain stream";
    const body = await readKnownLength(
      bodyOf([part(5, 1), part(70_000, 2), part(3, 3)], bytes),
      70_008,
    );
    strictEqual(body.length, 70_008, what);
    strictEqual(body.buffer.byteLength, 70_008, `${what}: one buffer of the body's length`);
    deepStrictEqual([body[0], body[4], body[5], body[70_004], body[70_005], body[70_007]], [
      1,
      1,
      2,
      2,
      3,
      3,
    ]);
    // The connection dropped before the end: not a TooLargeError.
    await rejects(
      readKnownLength(bodyOf([part(10, 1)], bytes), 11),
      (error: Error) => !(error instanceof TooLargeError),
      what,
    );
    await rejects(
      readKnownLength(bodyOf([part(10, 1), part(2, 1)], bytes), 11),
      TooLargeError,
      what,
    );
  }
});

Deno.test("http: a JSON response of limit + 1 bytes and an SSE event over the limit fail with invalid_response", async () => {
  const limit = 2000;
  // A result whose body has exactly `bytes` bytes.
  const body = (m: RawMessage, bytes: number) => {
    const empty = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [], pad: "" } });
    return JSON.stringify({
      jsonrpc: "2.0",
      id: m.id,
      result: { content: [], pad: "x".repeat(bytes - empty.length) },
    });
  };
  await using upstream = serveMcp((m) => {
    const args = (m.params?.arguments ?? {}) as { mode?: string };
    if (m.method !== "tools/call") return undefined;
    const headers = { "content-type": "application/json" };
    switch (args.mode) {
      case "exact":
        return new Response(body(m, limit), { headers });
      case "over":
        return new Response(body(m, limit + 1), { headers });
      case "over-chunked":
        // No Content-Length: the bridge counts the bytes as they come.
        return new Response(ReadableStream.from([new TextEncoder().encode(body(m, limit + 1))]), {
          headers,
        });
      case "sse-over":
        return new Response(`event: message\ndata: ${body(m, limit + 1)}\n\n`, {
          headers: { "content-type": "text/event-stream" },
        });
      case "sse-exact":
        return new Response(
          `: keepalive\r\nevent: message\r\ndata: ${body(m, limit)}\r\n\r\n`,
          { headers: { "content-type": "text/event-stream" } },
        );
    }
  });
  await using bridge = new InProcessBridge(
    [...SECRET_ARGS, "--max-response-bytes", String(limit)],
    upstream.url,
    { env: SECRET_ENV },
  );
  await bridge.initialize();
  const call = async (id: number, mode: string) => {
    await bridge.request(id, "tools/call", { name: "x", arguments: { mode } });
    return await bridge.response(id);
  };
  ok("result" in await call(1, "exact"));
  deepStrictEqual(errorOf(await call(2, "over")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual(errorOf(await call(3, "over-chunked")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual(errorOf(await call(4, "sse-over")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  ok("result" in await call(5, "sse-exact"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

Deno.test("http: a large JSON body of a known length comes whole; one that stops before its Content-Length is transport_failed", async () => {
  const text = "QUJD".repeat(512 * 1024); // 2 MiB: read in place, into a buffer of its length
  await using upstream = serveMcp((m) => {
    if (m.method !== "tools/call") return undefined;
    const body = new TextEncoder().encode(JSON.stringify({
      jsonrpc: "2.0",
      id: m.id,
      result: { resultType: "complete", content: [{ type: "text", text }] },
    }));
    const name = (m.params as { name?: string }).name;
    const headers = { "content-type": "application/json", "content-length": String(body.length) };
    if (name === "whole") return new Response(body, { headers });
    // The same Content-Length, and the connection drops after half of the body.
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new Error("dropped"));
        sent = true;
        controller.enqueue(body.subarray(0, body.length >> 1));
      },
    });
    return new Response(stream, { headers });
  });
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "whole", arguments: {} });
  const whole = await bridge.response(1);
  strictEqual((whole.result as { content: { text: string }[] }).content[0]!.text, text);
  await bridge.request(2, "tools/call", { name: "cut", arguments: {} });
  deepStrictEqual(errorOf(await bridge.response(2)).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

Deno.test("readJsonBody: a small body whole", async () => {
  const bytes = await readJsonBody(new Response("{}"), 10);
  strictEqual(new TextDecoder().decode(bytes), "{}");
});
