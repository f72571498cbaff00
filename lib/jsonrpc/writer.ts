/**
 * The message writer: one message per line, whole, in the order of the calls.
 *
 * @module
 */

import { type ByteOutput, type ChunkSink, isWritableStream, openSink } from "./byte_io.ts";
import { isLargeMessage, serializeInChunks } from "./large.ts";
import type { Json, Message } from "./message.ts";
import { serializeSkeleton, skeletonOf } from "./skeleton.ts";

const encoder = new TextEncoder();
const NEWLINE = new Uint8Array([0x0a]);

/** What a large message counts in the backlog: its text is made while the sink takes it. */
const LARGE_BACKLOG_BYTES = 1024 * 1024;

/** Messages written while the sink is busy are joined into one chunk up to this size. */
const BATCH_BYTES = 256 * 1024;

/** What a message waits as: its JSON text (encoded with its batch), or its bytes. */
type Body = string | Uint8Array | Iterable<Uint8Array>;

/**
 * Above this many bytes waiting for the sink, {@linkcode MessageWriter.hold}
 * asks the readers to pause: a peer that stops reading stops the bridge from
 * reading, instead of filling its memory.
 */
export const HIGH_WATER_BYTES = 1024 * 1024;

/** Options of {@linkcode MessageWriter}. */
export interface MessageWriterOptions {
  /** The backlog above which {@linkcode MessageWriter.hold} holds the readers. */
  readonly highWaterBytes?: number;
  /**
   * What to write instead of a message that cannot be serialized (for a
   * response: an error response for its id); undefined drops the message.
   */
  readonly replaceUnwritable?: (message: Message, error: Error) => Message | undefined;
  /**
   * The sink is done with a chunk once its write resolves, as a Deno
   * resource (the pipe of a child) is: the writer then encodes each batch
   * into the same buffer. Default: true for a {@linkcode ByteWriter}, whose
   * contract it is; false for a WritableStream, whose reader can see a chunk
   * after its write resolved (a TransformStream).
   */
  readonly reuseBuffer?: boolean;
}

/** The size of the reused batch buffer at the start; it grows up to {@linkcode MAX_REUSED_BYTES}. */
const REUSED_BYTES = 16 * 1024;
/** A batch buffer above this size is not kept after its batch. */
const MAX_REUSED_BYTES = 1024 * 1024;

/**
 * Why a message of {@linkcode MessageWriter.write} did not reach the sink:
 * the writer was closed, the sink failed (`cause` is its error: a reader of
 * the other end that is gone gives `Deno.errors.BrokenPipe`), or the message
 * cannot be serialized.
 *
 * @example
 * ```ts
 * import { MessageWriter, UnwrittenMessage } from "./writer.ts";
 * const writer = new MessageWriter(new WritableStream({ write: () => Promise.reject(new Error("gone")) }));
 * const refused = await writer.write({ jsonrpc: "2.0", method: "ping" }).catch((e) => e);
 * if (!(refused instanceof UnwrittenMessage) || refused.reason !== "broken") throw new Error();
 * ```
 */
export class UnwrittenMessage extends Error {
  readonly reason: "closed" | "broken" | "unserializable";

  constructor(reason: UnwrittenMessage["reason"], cause?: unknown) {
    super(`the message was not written: ${reason}`, { cause });
    this.name = "UnwrittenMessage";
    this.reason = reason;
  }
}

/** Settles the promise of {@linkcode MessageWriter.write}: no argument once the sink took it. */
type Done = (error?: UnwrittenMessage) => void;

interface Queued {
  /**
   * The JSON text of a small message (encoded with its batch, into one
   * buffer), the bytes of a long one, or the chunks of a large one.
   */
  readonly body: Body;
  /** What it counts in the backlog: the length of its text (bytes for ASCII). */
  readonly size: number;
  /** For {@linkcode MessageWriter.write}; {@linkcode MessageWriter.send} needs none. */
  readonly done: Done | undefined;
}

/**
 * Writes JSON-RPC messages to a byte stream. Each message is one line that
 * is never split between chunks, so two messages never interleave. The
 * order of the calls is the order on the wire. While the sink is busy, the
 * next messages wait and then go out together in one chunk: under load the
 * bridge makes one write for many small messages. A call of `write`
 * resolves when the sink took its line, and rejects with an
 * {@linkcode UnwrittenMessage} when its line cannot reach the sink; `send`
 * is the same without a promise, for the messages that nobody waits for.
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
  #writer: ChunkSink;
  #queue: Queued[] = [];
  #flushing = false;
  #closed = false;
  /** The error of the sink's failed write: each later message fails with it. */
  #broken: UnwrittenMessage | undefined;
  #idle: (() => void) | undefined;
  /** Bytes queued and not yet taken by the sink. */
  #backlog = 0;
  readonly #highWater: number;
  /** Settles when the backlog falls to half the high water. */
  #drained: { promise: Promise<void>; resolve: () => void } | undefined;
  readonly #replace: MessageWriterOptions["replaceUnwritable"];
  /**
   * The buffer of the batches when the sink is done with each chunk at the
   * end of its write: one allocation for the connection, where a buffer per
   * batch cost an allocation outside the JS heap and its free by the
   * collector's thread (a lock of the allocator) for every small message.
   */
  #reused: Uint8Array | undefined;

  constructor(sink: ByteOutput, options: MessageWriterOptions = {}) {
    this.#writer = openSink(sink);
    this.#highWater = options.highWaterBytes ?? HIGH_WATER_BYTES;
    this.#replace = options.replaceUnwritable;
    if (options.reuseBuffer ?? !isWritableStream(sink)) {
      this.#reused = new Uint8Array(REUSED_BYTES);
    }
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
   * Queues one message; resolves when the sink took it. It rejects with an
   * {@linkcode UnwrittenMessage} after {@linkcode close}, when the sink
   * failed (this write or an earlier one: a reader that is gone reads
   * nothing more), and for a message that cannot be serialized (a value
   * nested too deep for JSON.stringify) and that `replaceUnwritable` does
   * not replace. It never stops the writer for a message of its own.
   */
  write(message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const refused = this.#queueMessage(message, (error) => error ? reject(error) : resolve());
      if (refused) reject(refused);
    });
  }

  /**
   * Queues one message, as {@linkcode write} does, without a promise: the
   * front end's responses and notifications, which nobody waits for, cost
   * no promise and no closure each.
   */
  send(message: Message): void {
    this.#queueMessage(message, undefined);
  }

  /** Why the message was not queued, or undefined when it was. */
  #queueMessage(message: Message, done: Done | undefined): UnwrittenMessage | undefined {
    if (this.#closed) return new UnwrittenMessage("closed");
    if (this.#broken) return this.#broken;
    let queued = this.#serialize(message);
    if (queued instanceof Error) {
      const replacement = this.#replace?.(message, queued);
      if (!replacement) return new UnwrittenMessage("unserializable", queued);
      queued = this.#serialize(replacement);
      if (queued instanceof Error) return new UnwrittenMessage("unserializable", queued);
    }
    this.#backlog += queued.size;
    this.#queue.push({ body: queued.body, size: queued.size, done });
    if (!this.#flushing) {
      // The flush starts after the current task and its microtasks: the
      // messages that they write go out in the same chunk, one write for all.
      this.#flushing = true;
      queueMicrotask(() => this.#flush());
    }
    return undefined;
  }

  #serialize(message: Message): { body: Body; size: number } | Error {
    try {
      const sk = skeletonOf((message as { result?: Json }).result);
      if (sk) {
        // The long strings go out as the bytes of the line they came in.
        return { body: serializeSkeleton(message, sk), size: LARGE_BACKLOG_BYTES };
      }
      if (isLargeMessage(message)) {
        // Its text is made slice by slice while the sink takes it.
        return { body: serializeInChunks(message), size: LARGE_BACKLOG_BYTES };
      }
      const text = JSON.stringify(message);
      if (text.length <= BATCH_BYTES) return { body: text, size: text.length + 1 };
      // A long message and its newline go as two chunks, one after the
      // other: joining them would copy the whole message once more.
      const bytes = encoder.encode(text);
      return { body: [bytes, NEWLINE], size: bytes.length + 1 };
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0) {
      const first = this.#queue[0]!;
      if (typeof first.body !== "string") {
        this.#queue.shift();
        const failed = await this.#writeChunks(first.body as Iterable<Uint8Array>);
        this.#took(first.size);
        first.done?.(failed);
        continue;
      }
      const batch = this.#takeBatch();
      const chunk = encodeBatch(batch, this.#reused);
      // A larger buffer that this batch needed serves the next ones.
      if (this.#reused && chunk.buffer !== this.#reused.buffer) {
        if (chunk.buffer.byteLength <= MAX_REUSED_BYTES) {
          this.#reused = new Uint8Array(chunk.buffer);
        }
      }
      if (!this.#broken) {
        try {
          await this.#writer.write(chunk);
        } catch (error) {
          this.#break(error); // the reader of the other end is gone
        }
      }
      for (const q of batch) {
        this.#took(q.size);
        q.done?.(this.#broken);
      }
    }
    this.#flushing = false;
    this.#idle?.();
  }

  /** The chunks of one message; why it did not reach the sink whole, if it did not. */
  async #writeChunks(chunks: Iterable<Uint8Array>): Promise<UnwrittenMessage | undefined> {
    try {
      for (const chunk of chunks) {
        if (this.#broken) break;
        try {
          await this.#writer.write(chunk);
        } catch (error) {
          this.#break(error);
        }
      }
    } catch (error) {
      // The slices of a large message failed after its start: end its
      // line, so the next message starts on a line of its own.
      if (!this.#broken) await this.#writer.write(NEWLINE).catch((e) => this.#break(e));
      return this.#broken ?? new UnwrittenMessage("unserializable", error);
    }
    return this.#broken;
  }

  /** The sink failed: this message and each later one fail with its error. */
  #break(error: unknown): void {
    this.#broken ??= new UnwrittenMessage("broken", error);
  }

  /** The next messages of text, up to the batch size (at least one). */
  #takeBatch(): Queued[] {
    let size = 0;
    let n = 0;
    for (; n < this.#queue.length; n++) {
      const { body } = this.#queue[n]!;
      if (typeof body !== "string" || (n > 0 && size + body.length > BATCH_BYTES)) break;
      size += body.length + 1;
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

/**
 * Encodes the texts of a batch, each with its newline, into one buffer:
 * `into` when it is large enough, else a new one; where an encode per
 * message and a join made two allocations per message and copied each line
 * twice. The buffer starts at the length of the texts (exact for ASCII) and
 * grows only for a text with other characters. The result is a view of its
 * buffer.
 */
export function encodeBatch(
  batch: readonly { readonly body: Body }[],
  into?: Uint8Array,
): Uint8Array {
  let chars = 0;
  for (const { body } of batch) chars += (body as string).length + 1;
  let buffer = into && into.length >= chars ? into : new Uint8Array(chars);
  let at = 0;
  for (let i = 0; i < batch.length; i++) {
    const text = batch[i]!.body as string;
    let { read, written } = encoder.encodeInto(text, buffer.subarray(at));
    if (read < text.length || at + written >= buffer.length) {
      // Non-ASCII text: room for the worst case of this text and the rest.
      chars -= text.length + 1;
      const bigger = new Uint8Array(at + text.length * 3 + 1 + chars);
      bigger.set(buffer.subarray(0, at));
      buffer = bigger;
      ({ read, written } = encoder.encodeInto(text, buffer.subarray(at)));
    } else chars -= text.length + 1;
    at += written;
    buffer[at++] = 0x0a;
  }
  return at === buffer.length ? buffer : buffer.subarray(0, at);
}
