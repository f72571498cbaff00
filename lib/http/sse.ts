/**
 * A bounded reader of a Server-Sent Events stream (the WHATWG rules of
 * `text/event-stream`): the data of one event over the limit fails at once,
 * without the rest of the stream in memory.
 *
 * Why not the `EventSourceParserStream` that the SDK v2 client uses: it
 * decodes the whole stream to text and has no limit on an event.
 *
 * @module
 */

import { concatBytes, TooLargeError } from "./bounded_body.ts";

/** One event of a stream: its type (`message` when the stream gave none) and its data. */
export interface SseEvent {
  readonly event: string;
  /** The data lines, joined with "\n", as UTF-8 bytes. */
  readonly data: Uint8Array;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** The room for a field name and its colon beyond the limit of the data in one line. */
const FIELD_ROOM = 64;
const ascii = new TextDecoder();

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
