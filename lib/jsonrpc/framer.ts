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

import { untilAborted } from "./abortable.ts";
import { type ByteInput, readChunks } from "./byte_io.ts";
import { isBlank, LineBuffer, TailRing } from "./line_buffer.ts";

/** How many bytes of the head and of the tail of a too-long line are kept. */
export const EDGE_BYTES = 256;

/**
 * A complete line, without its line ending. Its bytes can be a view of an
 * input chunk: the input must not reuse a chunk after it gave it (a stream's
 * reader never does).
 */
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

/**
 * What the framer emits.
 *
 * @example
 * ```ts
 * import { type Frame, readFrames } from "./framer.ts";
 * import { scanIdFromHead } from "./id_scan.ts";
 * const long = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"${"a".repeat(100)}"}\n`;
 * const frames: Frame[] = [];
 * const input = ReadableStream.from([new TextEncoder().encode(long)]);
 * await readFrames(input, { maxLineBytes: 64 }, (frame) => void frames.push(frame));
 * // A too-long line keeps its head: enough to find the id of its error response.
 * const frame = frames[0]!;
 * if (frame.kind !== "too_long") throw new Error();
 * const scan = scanIdFromHead(frame.head);
 * if (!scan.found || scan.id !== 9) throw new Error();
 * ```
 */
export type Frame = LineFrame | TooLongFrame;

const LF = 0x0a;
const CR = 0x0d;
/** The UTF-8 byte order mark, which some writers put at the start of a stream. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/** Options of {@linkcode LineFramer}. */
export interface LineFramerOptions {
  /** The largest line, in bytes, without its line ending. */
  readonly maxLineBytes: number;
  /**
   * Each chunk is a buffer of its own that no one else holds (the reads of
   * `readChunks`): the framer gives back the memory of a chunk without a
   * newline once its line is copied out. Not for the chunks of a caller.
   */
  readonly ownsChunks?: boolean;
}

/**
 * The framing state of one byte stream, without a stream around it: the
 * readers of the bridge feed it chunk by chunk, and {@linkcode LineFramer}
 * wraps it as a TransformStream. Accepts LF and CRLF, skips blank lines,
 * emits a last line that has no newline at {@linkcode LineSplitter.end}, and
 * replaces a line above the limit with a {@linkcode TooLongFrame}. A UTF-8
 * byte order mark at the start of the stream is skipped, as the JSON parsers
 * of the ecosystem do; a BOM anywhere else stays in its line.
 */
export class LineSplitter {
  readonly #max: number;
  readonly #line = new LineBuffer();
  // One more byte than kept: a CR at the end belongs to the line ending.
  readonly #tail = new TailRing(EDGE_BYTES + 1);
  readonly #head = new Uint8Array(EDGE_BYTES + 1);
  #headLength = 0;
  #overflow = false; // the current line passed max + 1 bytes
  #total = 0; // bytes of the current line, with a possible trailing CR
  /** Bytes of the BOM matched at the start of the stream; -1 once the start is past. */
  #bom = 0;

  readonly #ownsChunks: boolean;

  constructor(options: LineFramerOptions) {
    this.#max = options.maxLineBytes;
    this.#ownsChunks = options.ownsChunks ?? false;
  }

  /** Feeds one chunk; `emit` gets each complete frame in order. */
  push(chunk: Uint8Array, emit: (frame: Frame) => void): void {
    let start = this.#bom === -1 ? 0 : this.#skipBom(chunk);
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        // A chunk without a newline, from its first byte: no other frame is a view of it.
        this.#append(chunk, start, chunk.length, this.#ownsChunks && start === 0);
        return;
      }
      if (this.#line.length === 0 && !this.#overflow) {
        // A line that lies within one chunk is a view of the chunk: no copy
        // into the line buffer and none out of it (two copies a line saved).
        const end = nl > start && chunk[nl - 1] === CR ? nl - 1 : nl;
        if (end - start <= this.#max) {
          if (!isBlank(chunk, start, end)) {
            emit({ kind: "line", bytes: chunk.subarray(start, end) });
          }
          start = nl + 1;
          continue;
        }
      }
      this.#append(chunk, start, nl);
      this.#finishLine(emit);
      start = nl + 1;
    }
  }

  /** The end of the input: a last line without a newline. */
  end(emit: (frame: Frame) => void): void {
    this.#giveBackBom();
    if (this.#overflow || this.#line.length > 0) this.#finishLine(emit);
  }

  /**
   * Matches the start of the stream against the BOM, also when the BOM is
   * split between chunks; returns where the data of `chunk` starts.
   */
  #skipBom(chunk: Uint8Array): number {
    let i = 0;
    while (i < chunk.length && this.#bom < BOM.length) {
      if (chunk[i] !== BOM[this.#bom]) {
        this.#giveBackBom();
        return i;
      }
      this.#bom++;
      i++;
    }
    if (this.#bom === BOM.length) this.#bom = -1;
    return i;
  }

  /** The start was not a whole BOM: its matched bytes are data of the first line. */
  #giveBackBom(): void {
    const matched = this.#bom;
    this.#bom = -1;
    if (matched > 0) this.#append(new Uint8Array(BOM.slice(0, matched)), 0, matched);
  }

  #keepEdges(bytes: Uint8Array): void {
    if (this.#headLength < this.#head.length) {
      const n = Math.min(this.#head.length - this.#headLength, bytes.length);
      this.#head.set(bytes.subarray(0, n), this.#headLength);
      this.#headLength += n;
    }
    this.#tail.push(bytes);
  }

  // One byte of slack holds the CR of a CRLF ending after a line of max bytes.
  #enterOverflow(): void {
    this.#overflow = true;
    this.#headLength = 0;
    this.#line.forEachPart((part) => this.#keepEdges(part));
    this.#line.reset();
  }

  #append(chunk: Uint8Array, start: number, end: number, owned = false): void {
    if (start === end) return;
    this.#total += end - start;
    if (this.#overflow) {
      this.#keepEdges(chunk.subarray(start, end));
      return;
    }
    this.#line.append(chunk, start, end, owned);
    if (this.#line.length > this.#max + 1) this.#enterOverflow();
  }

  #finishLine(emit: (frame: Frame) => void): void {
    if (!this.#overflow) {
      const length = this.#line.length;
      const end = this.#line.lastByte() === CR ? length - 1 : length;
      if (end <= this.#max) {
        const bytes = this.#line.isBlank(end) ? undefined : this.#line.take(end);
        this.#line.reset();
        this.#total = 0;
        if (bytes) emit({ kind: "line", bytes });
        return;
      }
      this.#enterOverflow();
    }
    const tailBytes = this.#tail.take();
    const hasCr = tailBytes[tailBytes.length - 1] === CR;
    const length = hasCr ? this.#total - 1 : this.#total;
    const tailEnd = hasCr ? tailBytes.length - 1 : tailBytes.length;
    const frame: Frame = {
      kind: "too_long",
      head: this.#head.slice(0, Math.min(EDGE_BYTES, length)),
      tail: tailBytes.slice(Math.max(0, tailEnd - EDGE_BYTES), tailEnd),
      length,
    };
    this.#overflow = false;
    this.#headLength = 0;
    this.#total = 0;
    emit(frame);
  }
}

/**
 * Splits a byte stream into lines, as a TransformStream: the framing of
 * {@linkcode LineSplitter}.
 */
export class LineFramer extends TransformStream<Uint8Array, Frame> {
  constructor(options: LineFramerOptions) {
    const splitter = new LineSplitter(options);
    super({
      transform(chunk, controller) {
        splitter.push(chunk, (frame) => controller.enqueue(frame));
      },
      flush(controller) {
        splitter.end((frame) => controller.enqueue(frame));
      },
    });
  }
}

/** What a slot of a delivered frame holds, so the frame itself can be collected. */
const DELIVERED: Frame = { kind: "line", bytes: new Uint8Array(0) };

/**
 * What {@linkcode readFrames} gives each frame to. A returned promise holds
 * the reading of the next frame (and of the next chunk) until it settles:
 * the back pressure of a slow peer reaches the input, not a buffer.
 */
export type FrameHandler = (frame: Frame) => void | Promise<void>;

/**
 * Reads a byte stream to its end and gives each frame to `onFrame` at once,
 * without a stream stage per line. An abort of `signal` ends the reading as
 * the end of the input does.
 *
 * @example
 * ```ts
 * import { readFrames } from "./framer.ts";
 * const text = '{"jsonrpc":"2.0","method":"x"}\r\n\n' + "a".repeat(100) + "\n";
 * const input = ReadableStream.from([new TextEncoder().encode(text)]);
 * const lines: string[] = [];
 * await readFrames(input, { maxLineBytes: 50 }, (frame) => {
 *   lines.push(
 *     frame.kind === "line" ? new TextDecoder().decode(frame.bytes) : `too long: ${frame.length}`,
 *   );
 * });
 * // The blank line is skipped; a line ending is not part of its line.
 * if (lines.join("|") !== '{"jsonrpc":"2.0","method":"x"}|too long: 100') throw new Error();
 * ```
 */
export async function readFrames(
  input: ByteInput,
  options: LineFramerOptions,
  onFrame: FrameHandler,
  signal?: AbortSignal,
): Promise<void> {
  const source = readChunks(input);
  const splitter = new LineSplitter({ ...options, ownsChunks: source.owned });
  // An abort also ends a pause (untilAborted below): a stalled peer cannot hold the end of the reading.
  const stop = () => source.cancel();
  signal?.addEventListener("abort", stop, { once: true });
  // The frames of one chunk; the handler can pause between them.
  const frames: Frame[] = [];
  const collect = (frame: Frame) => void frames.push(frame);
  // Each frame is let go before the pause after it: the bytes of a large
  // line are garbage while its result is written, not kept until the end of
  // the chunk's frames.
  const next = (i: number): Frame => {
    const frame = frames[i]!;
    frames[i] = DELIVERED;
    return frame;
  };
  const deliver = async () => {
    for (let i = 0; i < frames.length && !signal?.aborted; i++) {
      const hold = onFrame(next(i));
      if (hold) await (signal ? untilAborted(hold, signal, undefined) : hold);
    }
    frames.length = 0;
  };
  try {
    for (;;) {
      const chunk = await source.next();
      if (chunk === null) break;
      splitter.push(chunk, collect);
      if (frames.length > 0) await deliver();
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    source.release();
  }
  if (!signal?.aborted) {
    splitter.end(collect);
    await deliver();
  }
}
