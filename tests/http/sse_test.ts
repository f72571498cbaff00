/** The bounded reader of SSE events of the HTTP link. */

import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { TooLargeError } from "../../lib/http/bounded_body.ts";
import { readEvents } from "../../lib/http/sse.ts";

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
