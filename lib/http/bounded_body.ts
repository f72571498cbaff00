/**
 * Bounded reads of a response body: a whole body of at most a limit, a
 * body of a known length in one buffer, and the JSON body of a response. A
 * body over its limit fails at once ({@linkcode TooLargeError}), without the
 * rest of it in memory.
 *
 * @module
 */

/** A message (a JSON body, or the data of one event) is longer than the limit. */
export class TooLargeError extends Error {
  override name = "TooLargeError";
  constructor(readonly limit: number) {
    super(`the message is longer than the limit of ${limit} bytes`);
  }
}

/** Joins byte chunks into one array (no copy for a single chunk). */
export function concatBytes(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * Reads a whole body of at most `limit` bytes. Throws {@linkcode TooLargeError}
 * as soon as the body is longer, and cancels the rest of it.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > limit) {
        reader.cancel().catch(() => {});
        throw new TooLargeError(limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks, length);
}

/**
 * Reads a body of a known length (its Content-Length) into one buffer of
 * that length. `arrayBuffer()` gathers the chunks and then copies them into
 * a new buffer: two copies of a 63 MiB body at its end, and the second
 * large body of a process on top of the first one's garbage. A BYOB read
 * fills the buffer in place (a stream without BYOB is read by
 * {@linkcode readBounded}). A body that ends early fails (the connection
 * dropped), one that goes on past its length is {@linkcode TooLargeError}.
 */
export async function readKnownLength(
  body: ReadableStream<Uint8Array>,
  length: number,
): Promise<Uint8Array> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    byob = undefined; // not a byte stream
  }
  if (!byob) {
    // Not a byte stream (a fetch body always is one): read it as a bounded body.
    const bytes = await readBounded(body, length);
    if (bytes.length < length) throw new Error("the body ended before its Content-Length");
    return bytes;
  }
  let buffer = new Uint8Array(length);
  let at = 0;
  try {
    while (at < length) {
      const { done, value } = await byob.read(buffer.subarray(at));
      if (done || !value) break;
      // The read hands the memory back under a new ArrayBuffer.
      buffer = new Uint8Array(value.buffer);
      at += value.length;
    }
    if (at < length) throw new Error("the body ended before its Content-Length");
    // The end of the body, or a byte past its length.
    const after = await byob.read(new Uint8Array(1));
    if (!after.done) {
      byob.cancel().catch(() => {});
      throw new TooLargeError(length);
    }
  } finally {
    byob.releaseLock();
  }
  return buffer;
}

/**
 * A JSON body of a known length from this size on is read in place
 * (`readKnownLength`); a smaller one through `arrayBuffer()`, which costs
 * less per body.
 */
const KNOWN_LENGTH_IN_PLACE = 1024 * 1024;

/**
 * Reads the JSON body of a response with the limit: one whose Content-Length
 * is over the limit fails at once, one within it is read natively (the HTTP
 * framing stops it at its length), a large one into a buffer of its length,
 * and one without a length is counted as it comes. The body's stream is
 * asked for only by the last two: the client of our own makes one per
 * response that asks, and reads a small body straight from its buffer.
 */
export async function readJsonBody(response: Response, limit: number): Promise<Uint8Array> {
  // A Content-Length says nothing of the body that fetch gives when the body
  // is encoded (fetch decodes it, though the link asks for identity): the
  // body is then counted as it comes. So it is beside a Transfer-Encoding.
  const encoding = response.headers.get("content-encoding");
  const length = response.headers.get("transfer-encoding") !== null ||
      (encoding !== null && encoding.trim().toLowerCase() !== "identity")
    ? Number.NaN
    : Number(response.headers.get("content-length") ?? Number.NaN);
  if (length > limit) {
    await response.body?.cancel().catch(() => {});
    throw new TooLargeError(limit);
  }
  if (Number.isSafeInteger(length) && length < KNOWN_LENGTH_IN_PLACE) {
    return await response.bytes();
  }
  const body = response.body;
  if (!body) return new Uint8Array(0);
  return Number.isSafeInteger(length)
    ? await readKnownLength(body, length)
    : await readBounded(body, limit);
}
