/** The bounded reads of a body: a whole body of at most a limit, and a body of a known length. */

import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { readBounded, readKnownLength, TooLargeError } from "../../lib/upstream/bounded_body.ts";

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
