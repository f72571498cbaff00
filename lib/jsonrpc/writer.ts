/**
 * The message writer: one message per line, whole, in the order of the calls.
 *
 * @module
 */

import type { Message } from "./message.ts";

const encoder = new TextEncoder();

/**
 * Writes JSON-RPC messages to a byte stream. Each message is one chunk that
 * ends with a newline, so two messages never interleave; the stream's own
 * queue keeps the order of the calls, and each call resolves when the sink
 * took its chunk (back pressure).
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
  #closed = false;

  constructor(sink: WritableStream<Uint8Array>) {
    this.#writer = sink.getWriter();
  }

  /** Queues one message. A write after {@linkcode close} or a broken sink is dropped. */
  write(message: Message): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const line = encoder.encode(JSON.stringify(message) + "\n");
    return this.#writer.write(line).catch(() => {
      this.#closed = true;
    });
  }

  /** Waits for the queued messages, then closes the sink. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#writer.close();
    } catch {
      // The reader of the other end is gone: nothing left to deliver.
    }
  }
}
