/**
 * The buffers of the line framer (./framer.ts): the bytes of the current
 * line, and the last bytes of a line that is too long.
 *
 * @module
 */

const CR = 0x0d;

/** True for a line that has only spaces, tabs and carriage returns. */
export function isBlank(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  }
  return true;
}

/** Above this size a line is kept as a list of parts, not in one growing buffer. */
const SMALL_LINE = 64 * 1024;

/**
 * The bytes of the current line. A small line is copied into one buffer; a
 * large line keeps references to the parts of the input chunks and is joined
 * once, at its end, into a buffer of its exact size: a doubling buffer would
 * hold up to three times the line while it grows.
 */
export class LineBuffer {
  #small = new Uint8Array(1024);
  #smallLength = 0;
  #parts: Uint8Array[] = [];
  #length = 0;
  /** The parts that are whole chunks of a reader that owns them (see `ownsChunks`). */
  #owned: Uint8Array[] = [];

  get length(): number {
    return this.#length;
  }

  /** `owned`: `src` is a whole chunk that only this line holds. */
  append(src: Uint8Array, start: number, end: number, owned = false): void {
    const n = end - start;
    this.#length += n;
    if (this.#parts.length === 0 && this.#smallLength + n <= SMALL_LINE) {
      if (this.#smallLength + n > this.#small.length) {
        let size = this.#small.length * 2;
        while (size < this.#smallLength + n) size *= 2;
        const next = new Uint8Array(size);
        next.set(this.#small.subarray(0, this.#smallLength));
        this.#small = next;
      }
      this.#small.set(src.subarray(start, end), this.#smallLength);
      this.#smallLength += n;
      return;
    }
    if (this.#parts.length === 0 && this.#smallLength > 0) {
      this.#parts.push(this.#small.slice(0, this.#smallLength));
    }
    this.#parts.push(src.subarray(start, end));
    if (owned) this.#owned.push(src);
  }

  /** The last byte, or undefined for an empty line. */
  lastByte(): number | undefined {
    if (this.#parts.length === 0) {
      return this.#smallLength === 0 ? undefined : this.#small[this.#smallLength - 1];
    }
    const last = this.#parts[this.#parts.length - 1]!;
    return last[last.length - 1];
  }

  /** Calls `fn` on each part of the line, in order. */
  forEachPart(fn: (part: Uint8Array) => void): void {
    if (this.#parts.length === 0) fn(this.#small.subarray(0, this.#smallLength));
    else this.#parts.forEach(fn);
  }

  /** True when the first `end` bytes are spaces, tabs and carriage returns only. */
  isBlank(end: number): boolean {
    let seen = 0;
    let blank = true;
    this.forEachPart((part) => {
      if (!blank || seen >= end) return;
      const stop = Math.min(part.length, end - seen);
      blank = isBlank(part, 0, stop);
      seen += stop;
    });
    return blank;
  }

  /** The first `end` bytes, in a buffer of its own; then the buffer is empty. */
  take(end: number): Uint8Array {
    let out: Uint8Array;
    if (this.#parts.length === 0) out = this.#small.slice(0, end);
    else {
      out = new Uint8Array(end);
      let offset = 0;
      for (const part of this.#parts) {
        if (offset >= end) break;
        const n = Math.min(part.length, end - offset);
        out.set(n === part.length ? part : part.subarray(0, n), offset);
        offset += n;
      }
    }
    this.reset();
    return out;
  }

  reset(): void {
    // The whole chunks of a large line give their memory back now, not at
    // the next full collection: up to the size of the line (a second large
    // line before that collection would otherwise hold both).
    for (const { buffer } of this.#owned) if (buffer instanceof ArrayBuffer) buffer.transfer(0);
    this.#owned = [];
    this.#smallLength = 0;
    this.#parts = [];
    this.#length = 0;
    // Do not keep a large buffer alive after one large line.
    if (this.#small.length > SMALL_LINE) this.#small = new Uint8Array(1024);
  }
}

/** Keeps the last `size` bytes that were pushed into it. */
export class TailRing {
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
