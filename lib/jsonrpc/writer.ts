/**
 * The message writer: one message per line, whole, in the order of the calls.
 *
 * @module
 */

import { isLargeMessage, serializeInChunks } from "./large.ts";
import type { Json, Message } from "./message.ts";
import { serializeSkeleton, skeletonOf } from "./skeleton.ts";

const encoder = new TextEncoder();
const NEWLINE = new Uint8Array([0x0a]);

/** What a large message counts in the backlog: its text is made while the sink takes it. */
const LARGE_BACKLOG_BYTES = 1024 * 1024;

/** Messages written while the sink is busy are joined into one chunk up to this size. */
const BATCH_BYTES = 256 * 1024;

/**
 * Above this many bytes waiting for the sink, {@linkcode MessageWriter.hold}
 * asks the readers to pause: a peer that stops reading stops the bridge from
 * reading, instead of filling its memory.
 */
export const HIGH_WATER_BYTES = 1024 * 1024;

/**
 * One hold for several outputs: undefined when none of them holds, else a
 * promise that settles when each of them has settled. A reader that feeds
 * more than one output pauses until all of them have room again.
 *
 * @example
 * ```ts
 * import { holdAll } from "./writer.ts";
 * if (holdAll(undefined, undefined) !== undefined) throw new Error();
 * await holdAll(undefined, Promise.resolve());
 * ```
 */
export function holdAll(...holds: (Promise<void> | undefined)[]): Promise<void> | undefined {
  const waiting = holds.filter((hold) => hold !== undefined);
  if (waiting.length <= 1) return waiting[0];
  return Promise.all(waiting).then(() => {});
}

/** Options of {@linkcode MessageWriter}. */
export interface MessageWriterOptions {
  /** The backlog above which {@linkcode MessageWriter.hold} holds the readers. */
  readonly highWaterBytes?: number;
  /**
   * What to write instead of a message that cannot be serialized (for a
   * response: an error response for its id); undefined drops the message.
   */
  readonly replaceUnwritable?: (message: Message, error: Error) => Message | undefined;
}

interface Queued {
  /** One chunk, or (for a large message) the chunks of one message, in order. */
  readonly bytes: Uint8Array | Iterable<Uint8Array>;
  /** The bytes it counts in the backlog (a large message counts its known part). */
  readonly size: number;
  readonly done: () => void;
}

/**
 * Writes JSON-RPC messages to a byte stream. Each message is one line that
 * is never split between chunks, so two messages never interleave. The
 * order of the calls is the order on the wire. While the sink is busy, the
 * next messages wait and then go out together in one chunk: under load the
 * bridge makes one write for many small messages. Each call resolves when
 * the sink took its line (back pressure).
 *
 * @example
 * ```ts
 * import { MessageWriter } from "./writer.ts";
 * const chunks: Uint8Array[] = [];
 * const writer = new MessageWriter(new WritableStream({ write: (c) => void chunks.push(c) }));
 * await writer.write({ jsonrpc: "2.0", method: "ping" });
 * if (new TextDecoder().decode(chunks[0]) !== '{"jsonrpc":"2.0","method":"ping"}\n') throw new Error();
 * ```
 */
export class MessageWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #queue: Queued[] = [];
  #flushing = false;
  #closed = false;
  #broken = false;
  #idle: (() => void) | undefined;
  /** Bytes queued and not yet taken by the sink. */
  #backlog = 0;
  readonly #highWater: number;
  /** Settles when the backlog falls to half the high water. */
  #drained: { promise: Promise<void>; resolve: () => void } | undefined;

  readonly #replace: MessageWriterOptions["replaceUnwritable"];

  constructor(sink: WritableStream<Uint8Array>, options: MessageWriterOptions = {}) {
    this.#writer = sink.getWriter();
    this.#highWater = options.highWaterBytes ?? HIGH_WATER_BYTES;
    this.#replace = options.replaceUnwritable;
  }

  /** The bytes that wait for the sink. */
  get backlog(): number {
    return this.#backlog;
  }

  /**
   * Undefined while the backlog is under the high water; else a promise that
   * settles when the sink has taken enough (half the high water), or when the
   * writer closes or breaks. A reader awaits it before its next message.
   */
  hold(): Promise<void> | undefined {
    if (this.#backlog < this.#highWater || this.#closed || this.#broken) return undefined;
    if (!this.#drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => resolve = r);
      this.#drained = { promise, resolve };
    }
    return this.#drained.promise;
  }

  #took(size: number): void {
    this.#backlog -= size;
    if (this.#drained && (this.#backlog <= this.#highWater / 2 || this.#broken)) {
      this.#drained.resolve();
      this.#drained = undefined;
    }
  }

  /**
   * Queues one message. A write after {@linkcode close} or a broken sink is
   * dropped. A message that cannot be serialized (a value nested too deep
   * for JSON.stringify) is replaced by what `replaceUnwritable` gives, or
   * dropped: it never throws and never stops the writer.
   */
  write(message: Message): Promise<void> {
    if (this.#closed) return Promise.resolve();
    let queued = this.#serialize(message);
    if (queued instanceof Error) {
      const replacement = this.#replace?.(message, queued);
      if (!replacement) return Promise.resolve();
      queued = this.#serialize(replacement);
      if (queued instanceof Error) return Promise.resolve();
    }
    return this.#enqueue(queued.bytes, queued.size);
  }

  #serialize(message: Message): { bytes: Uint8Array | Iterable<Uint8Array>; size: number } | Error {
    try {
      const sk = skeletonOf((message as { result?: Json }).result);
      if (sk) {
        // The long strings go out as the bytes of the line they came in.
        return { bytes: serializeSkeleton(message, sk), size: LARGE_BACKLOG_BYTES };
      }
      if (isLargeMessage(message)) {
        // Its text is made slice by slice while the sink takes it.
        return { bytes: serializeInChunks(message), size: LARGE_BACKLOG_BYTES };
      }
      const body = encoder.encode(JSON.stringify(message));
      if (body.length > BATCH_BYTES) {
        // A large message and its newline go as two chunks, one after the
        // other: joining them would copy the whole message once more.
        return { bytes: [body, NEWLINE], size: body.length + 1 };
      }
      const bytes = new Uint8Array(body.length + 1);
      bytes.set(body);
      bytes[body.length] = 0x0a;
      return { bytes, size: bytes.length };
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  #enqueue(bytes: Uint8Array | Iterable<Uint8Array>, size: number): Promise<void> {
    this.#backlog += size;
    return new Promise<void>((resolve) => {
      this.#queue.push({ bytes, size, done: resolve });
      if (!this.#flushing) this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0) {
      const first = this.#queue[0]!;
      if (!(first.bytes instanceof Uint8Array)) {
        this.#queue.shift();
        try {
          for (const chunk of first.bytes) {
            if (this.#broken) break;
            try {
              await this.#writer.write(chunk);
            } catch {
              this.#broken = true;
            }
          }
        } catch {
          // The slices of a large message failed after its start: end its
          // line, so the next message starts on a line of its own.
          if (!this.#broken) await this.#writer.write(NEWLINE).catch(() => this.#broken = true);
        }
        this.#took(first.size);
        first.done();
        continue;
      }
      const batch = this.#takeBatch();
      let chunk: Uint8Array;
      const parts = batch.map((q) => q.bytes as Uint8Array);
      if (parts.length === 1) chunk = parts[0]!;
      else {
        chunk = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
        let offset = 0;
        for (const part of parts) {
          chunk.set(part, offset);
          offset += part.length;
        }
      }
      if (!this.#broken) {
        try {
          await this.#writer.write(chunk);
        } catch {
          this.#broken = true; // the reader of the other end is gone
        }
      }
      for (const q of batch) {
        this.#took(q.size);
        q.done();
      }
    }
    this.#flushing = false;
    this.#idle?.();
  }

  /** The next single chunks, up to the batch size (a large one goes alone). */
  #takeBatch(): Queued[] {
    let size = 0;
    let n = 0;
    for (; n < this.#queue.length; n++) {
      const bytes = this.#queue[n]!.bytes;
      if (!(bytes instanceof Uint8Array) || (n > 0 && size + bytes.length > BATCH_BYTES)) break;
      size += bytes.length;
    }
    return this.#queue.splice(0, n);
  }

  /** Waits for the queued messages, then closes the sink. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#drained?.resolve();
    this.#drained = undefined;
    if (this.#flushing) await new Promise<void>((resolve) => this.#idle = resolve);
    if (this.#broken) return;
    try {
      await this.#writer.close();
    } catch {
      // The reader of the other end is gone: nothing left to deliver.
    }
  }
}
