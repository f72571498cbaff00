/**
 * A bounded reader of a Server-Sent Events stream (the WHATWG rules of
 * `text/event-stream`) and of a bounded body: the HTTP link reads each
 * response with a byte limit, and a message over the limit fails at once,
 * without the rest of the body in memory.
 *
 * Why not the `EventSourceParserStream` that the SDK v2 client uses: it
 * decodes the whole stream to text and has no limit on an event.
 *
 * @module
 */

/** One event of a stream: its type (`message` when the stream gave none) and its data. */
export interface SseEvent {
  readonly event: string;
  /** The data lines, joined with "\n", as UTF-8 bytes. */
  readonly data: Uint8Array;
}

/** A message (a JSON body, or the data of one event) is longer than the limit. */
export class TooLargeError extends Error {
  override name = "TooLargeError";
  constructor(readonly limit: number) {
    super(`the message is longer than the limit of ${limit} bytes`);
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** The room for a field name and its colon beyond the limit of the data in one line. */
const FIELD_ROOM = 64;
const ascii = new TextDecoder();

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
 *
 * @example
 * ```ts
 * import { readBounded } from "./sse.ts";
 * const bytes = await readBounded(new Response("{}").body!, 10);
 * if (bytes.length !== 2) throw new Error();
 * ```
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
 *
 * @example
 * ```ts
 * import { readKnownLength } from "./sse.ts";
 * const bytes = await readKnownLength(new Response("{}").body!, 2);
 * if (new TextDecoder().decode(bytes) !== "{}") throw new Error();
 * ```
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
 *
 * @example
 * ```ts
 * import { readJsonBody } from "./sse.ts";
 * const bytes = await readJsonBody(new Response("{}"), 10);
 * if (bytes.length !== 2) throw new Error();
 * ```
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

/** The state of one event while its lines come in. */
class EventBuilder {
  event = "";
  data: Uint8Array[] = [];
  dataLength = 0;
  hasData = false;

  constructor(readonly limit: number) {}

  /** One complete line of the stream; returns an event at a blank line. */
  line(line: Uint8Array): SseEvent | undefined {
    if (line.length === 0) return this.#dispatch();
    if (line[0] === COLON) return undefined; // a comment (a keepalive)
    let colon = line.indexOf(COLON);
    if (colon === -1) colon = line.length;
    const name = ascii.decode(line.subarray(0, colon));
    let value = line.subarray(Math.min(colon + 1, line.length));
    if (value[0] === SPACE) value = value.subarray(1);
    if (name === "data") {
      const added = (this.hasData ? 1 : 0) + value.length;
      if (this.dataLength + added > this.limit) throw new TooLargeError(this.limit);
      if (this.hasData) this.data.push(Uint8Array.of(LF));
      this.data.push(value);
      this.dataLength += added;
      this.hasData = true;
    } else if (name === "event") {
      this.event = ascii.decode(value);
    }
    // id and retry: the link never resumes a stream (no sessions), so it ignores them.
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const hasData = this.hasData;
    const event: SseEvent = {
      event: this.event === "" ? "message" : this.event,
      data: concatBytes(this.data, this.dataLength),
    };
    this.event = "";
    this.data = [];
    this.dataLength = 0;
    this.hasData = false;
    return hasData ? event : undefined;
  }
}

/**
 * Reads the events of a stream. The data of one event has at most `limit`
 * bytes: a longer one throws {@linkcode TooLargeError} at once, and the rest
 * of the stream is cancelled. A line holds at most the limit and the name of
 * its field. An event without a blank line before the end is dropped, as
 * the rules say.
 *
 * @example
 * ```ts
 * import { readEvents } from "./sse.ts";
 * const body = new Response("event: message\ndata: {}\n\n").body!;
 * for await (const event of readEvents(body, 100)) {
 *   if (new TextDecoder().decode(event.data) !== "{}") throw new Error();
 * }
 * ```
 */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  limit: number,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const builder = new EventBuilder(limit);
  const maxLine = limit + FIELD_ROOM;
  /** The start of the current line, from earlier chunks. */
  let partial: Uint8Array[] = [];
  let partialLength = 0;
  /** The last chunk ended with CR: a LF at the start of the next belongs to it. */
  let afterCr = false;
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      let start = 0;
      if (afterCr && value[0] === LF) start = 1;
      afterCr = false;
      for (let i = start; i < value.length; i++) {
        const byte = value[i];
        if (byte !== LF && byte !== CR) continue;
        let line = value.subarray(start, i);
        if (partialLength > 0) {
          partial.push(line);
          line = concatBytes(partial, partialLength + line.length);
          partial = [];
          partialLength = 0;
        }
        if (line.length > maxLine) throw new TooLargeError(limit);
        const event = builder.line(line);
        if (byte === CR) {
          if (i + 1 < value.length) {
            if (value[i + 1] === LF) i++;
          } else afterCr = true;
        }
        start = i + 1;
        if (event) yield event;
      }
      if (start < value.length) {
        const rest = value.subarray(start);
        partialLength += rest.length;
        if (partialLength > maxLine) throw new TooLargeError(limit);
        partial.push(rest);
      }
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
