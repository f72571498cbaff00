/**
 * The line framer: bytes in, one frame per line out.
 *
 * A frame is a whole line, or a marker for a line that is longer than the
 * limit. The framer never holds more than the limit of one line: for a line
 * that is too long it keeps only the first and the last {@linkcode EDGE_BYTES}
 * bytes, so a hostile peer cannot make it buffer without a bound.
 *
 * @module
 */

/** How many bytes of the head and of the tail of a too-long line are kept. */
export const EDGE_BYTES = 256;

/** A complete line, without its line ending. */
export interface LineFrame {
  readonly kind: "line";
  readonly bytes: Uint8Array;
}

/** A line longer than the limit: its first and last bytes and its length. */
export interface TooLongFrame {
  readonly kind: "too_long";
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
  readonly length: number;
}

/** What the framer emits. */
export type Frame = LineFrame | TooLongFrame;

const LF = 0x0a;
const CR = 0x0d;

/** True for a line that has only spaces, tabs and carriage returns. */
function isBlank(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  }
  return true;
}

/** Growable byte buffer with a hard cap. */
class LineBuffer {
  #buf = new Uint8Array(1024);
  #len = 0;

  get length(): number {
    return this.#len;
  }

  append(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.#len + n > this.#buf.length) {
      let size = this.#buf.length * 2;
      while (size < this.#len + n) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.#buf.subarray(0, this.#len));
      this.#buf = next;
    }
    this.#buf.set(src.subarray(start, end), this.#len);
    this.#len += n;
  }

  /** Returns a copy of the content and empties the buffer. */
  take(): Uint8Array {
    const out = this.#buf.slice(0, this.#len);
    this.reset();
    return out;
  }

  view(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }

  reset(): void {
    this.#len = 0;
    // Do not keep a huge buffer alive after one large line.
    if (this.#buf.length > 1 << 20) this.#buf = new Uint8Array(1024);
  }
}

/** Keeps the last `size` bytes that were pushed into it. */
class TailRing {
  #buf: Uint8Array;
  #len = 0;

  constructor(size: number) {
    this.#buf = new Uint8Array(size);
  }

  push(src: Uint8Array): void {
    const size = this.#buf.length;
    if (src.length >= size) {
      this.#buf.set(src.subarray(src.length - size));
      this.#len = size;
      return;
    }
    const keep = Math.min(this.#len, size - src.length);
    this.#buf.copyWithin(0, this.#len - keep, this.#len);
    this.#buf.set(src, keep);
    this.#len = keep + src.length;
  }

  take(): Uint8Array {
    const out = this.#buf.slice(0, this.#len);
    this.#len = 0;
    return out;
  }
}

/** Options of {@linkcode LineFramer}. */
export interface LineFramerOptions {
  /** The largest line, in bytes, without its line ending. */
  readonly maxLineBytes: number;
}

/**
 * Splits a byte stream into lines. Accepts LF and CRLF, skips blank lines,
 * emits a last line that has no newline, and replaces a line above the limit
 * with a {@linkcode TooLongFrame}.
 *
 * @example
 * ```ts
 * import { LineFramer } from "./framer.ts";
 * const frames = ReadableStream.from([new TextEncoder().encode("{}\r\n\n[]")])
 *   .pipeThrough(new LineFramer({ maxLineBytes: 1024 }));
 * const kinds = (await Array.fromAsync(frames)).map((f) => f.kind);
 * if (kinds.join() !== "line,line") throw new Error("unexpected frames");
 * ```
 */
export class LineFramer extends TransformStream<Uint8Array, Frame> {
  constructor(options: LineFramerOptions) {
    const max = options.maxLineBytes;
    const line = new LineBuffer();
    // One more byte than kept: a CR at the end belongs to the line ending.
    const tail = new TailRing(EDGE_BYTES + 1);
    const head = new Uint8Array(EDGE_BYTES + 1);
    let headLength = 0;
    let overflow = false; // the current line passed max + 1 bytes
    let total = 0; // bytes of the current line, with a possible trailing CR

    const keepEdges = (bytes: Uint8Array) => {
      if (headLength < head.length) {
        const n = Math.min(head.length - headLength, bytes.length);
        head.set(bytes.subarray(0, n), headLength);
        headLength += n;
      }
      tail.push(bytes);
    };

    // One byte of slack holds the CR of a CRLF ending after a line of max bytes.
    const enterOverflow = () => {
      overflow = true;
      headLength = 0;
      keepEdges(line.view());
      line.reset();
    };

    const appendPart = (chunk: Uint8Array, start: number, end: number) => {
      if (start === end) return;
      total += end - start;
      if (overflow) {
        keepEdges(chunk.subarray(start, end));
        return;
      }
      line.append(chunk, start, end);
      if (line.length > max + 1) enterOverflow();
    };

    const finishLine = (controller: TransformStreamDefaultController<Frame>) => {
      if (!overflow) {
        const view = line.view();
        const end = view.length > 0 && view[view.length - 1] === CR ? view.length - 1 : view.length;
        if (end <= max) {
          if (!isBlank(view, 0, end)) {
            controller.enqueue({ kind: "line", bytes: line.take().subarray(0, end) });
          }
          line.reset();
          total = 0;
          return;
        }
        enterOverflow();
      }
      const tailBytes = tail.take();
      const hasCr = tailBytes[tailBytes.length - 1] === CR;
      const length = hasCr ? total - 1 : total;
      const tailEnd = hasCr ? tailBytes.length - 1 : tailBytes.length;
      controller.enqueue({
        kind: "too_long",
        head: head.slice(0, Math.min(EDGE_BYTES, length)),
        tail: tailBytes.slice(Math.max(0, tailEnd - EDGE_BYTES), tailEnd),
        length,
      });
      overflow = false;
      headLength = 0;
      total = 0;
    };

    super({
      transform(chunk, controller) {
        let start = 0;
        for (;;) {
          const nl = chunk.indexOf(LF, start);
          if (nl === -1) {
            appendPart(chunk, start, chunk.length);
            return;
          }
          appendPart(chunk, start, nl);
          finishLine(controller);
          start = nl + 1;
        }
      },
      flush(controller) {
        if (overflow || line.length > 0) finishLine(controller);
      },
    });
  }
}
