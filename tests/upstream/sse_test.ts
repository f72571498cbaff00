/** The bounded readers of the HTTP link: SSE events and whole bodies. */

import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { readBounded, readKnownLength, TooLargeError } from "../../lib/upstream/bounded_body.ts";
import { readEvents } from "../../lib/upstream/sse.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A body of the given chunks (strings or bytes). */
function body(...chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? enc.encode(c) : c));
}

async function events(stream: ReadableStream<Uint8Array>, limit = 1000) {
  const out = [];
  for await (const e of readEvents(stream, limit)) out.push([e.event, dec.decode(e.data)]);
  return out;
}

Deno.test("sse: LF, CRLF and CR line ends, comments, multi-line data, event types", async () => {
  deepStrictEqual(
    await events(body(
      ": keepalive\n",
      "event: message\r\ndata: a\r\ndata: b\r\n\r\n",
      "data:c\r\rid: 7\nretry: 10\nevent: other\ndata: d\n\n",
      "data: no blank line at the end",
    )),
    [["message", "a\nb"], ["message", "c"], ["other", "d"]],
  );
});

Deno.test("sse: a CRLF split between two chunks is one line end; a line across chunks is whole", async () => {
  deepStrictEqual(
    await events(body('data: {"a":', "1}\r", "\n", "\r\n", "da", "ta: x\n\n")),
    [["message", '{"a":1}'], ["message", "x"]],
  );
});

Deno.test("sse: an event over the limit throws at once, and the rest of the stream is cancelled", async () => {
  let cancelled = false;
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(enc.encode(pulls === 1 ? "data: " : "x".repeat(100)));
    },
    cancel() {
      cancelled = true;
    },
  });
  await rejects(events(stream, 1000), TooLargeError);
  strictEqual(cancelled, true);
  strictEqual(pulls <= 13, true, `${pulls} chunks read`);
  // Data lines count with their joining newlines.
  await rejects(events(body("data: 12345\ndata: 1234\n\n"), 9), TooLargeError);
  deepStrictEqual(await events(body("data: 1234\ndata: 1234\n\n"), 9), [["message", "1234\n1234"]]);
});

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
