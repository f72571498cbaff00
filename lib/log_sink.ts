/**
 * Where the log lines of the process go: stderr, without ever blocking the
 * bridge. A client that does not read the stderr of the bridge must not stop
 * it (a blocking write would hold the whole event loop, ping included): the
 * lines wait in a bounded queue while stderr is full, the lines above the
 * bound are dropped and counted, and one line says how many were dropped
 * once stderr takes lines again. The exit waits for the queue for a bounded
 * time ({@linkcode LogSink.flush}).
 *
 * @module
 */

import { type ByteWriter, openSink } from "./jsonrpc/byte_io.ts";

const encoder = new TextEncoder();

/**
 * Lines are written together up to this size: a write to a pipe of at most
 * PIPE_BUF (4096 bytes on Linux) is atomic, so a line of the bridge never
 * interleaves with the stderr of the upstream server, which shares the pipe.
 */
const WRITE_BYTES = 4096;

/** The default bound of {@linkcode LogSinkOptions.maxBytes}: 1 MiB of lines. */
export const LOG_QUEUE_BYTES = 1024 * 1024;

/** How long the exit waits for the lines that still wait for stderr. */
export const LOG_FLUSH_MS = 2000;

/** The tag of a line of the logger (`[name] `), for the line that counts the dropped ones. */
const TAG = /^\[[^\]\n]*\] /;

/** Options of {@linkcode LogSink}. */
export interface LogSinkOptions {
  /** The bytes that may wait for the output; a line above it is dropped. */
  readonly maxBytes?: number;
}

/** One entry of the queue: a line, or the place of the lines dropped there. */
type Entry = string | { dropped: number; readonly tag: string };

/**
 * A bounded, non-blocking queue of lines in front of a byte writer.
 *
 * @example
 * ```ts
 * import { LogSink } from "./log_sink.ts";
 * const written: string[] = [];
 * const sink = new LogSink({
 *   write: (bytes) => {
 *     written.push(new TextDecoder().decode(bytes));
 *     return Promise.resolve(bytes.length);
 *   },
 * });
 * sink.write("[demo] info: one\n");
 * sink.write("[demo] info: two\n");
 * if (!(await sink.flush(1000))) throw new Error("not written in time");
 * if (written.join("") !== "[demo] info: one\n[demo] info: two\n") throw new Error();
 * ```
 */
export class LogSink {
  readonly #output: { write(chunk: Uint8Array): Promise<void> };
  readonly #maxBytes: number;
  /** The entries from {@linkcode #head} on wait (a shift would move the whole array each time). */
  #queue: Entry[] = [];
  #head = 0;
  /** The bytes of the lines in the queue (UTF-16 units: a bound, not an exact count). */
  #bytes = 0;
  /** A write to the output is under way (the queue is being written). */
  #writing = false;
  /** Settles when the queue is written, for {@linkcode flush}. */
  #written: PromiseWithResolvers<void> | undefined;
  /** The output failed (stderr is closed): nothing more is written. */
  #failed = false;

  constructor(output: ByteWriter, options: LogSinkOptions = {}) {
    this.#output = openSink(output);
    this.#maxBytes = options.maxBytes ?? LOG_QUEUE_BYTES;
  }

  /** Queues one line (with its newline), or drops and counts it when the queue is full. */
  write(line: string): void {
    if (this.#failed) return;
    if (this.#bytes + line.length > this.#maxBytes) {
      const last = this.#queue.length > this.#head ? this.#queue.at(-1) : undefined;
      if (typeof last === "object") last.dropped++;
      else this.#queue.push({ dropped: 1, tag: TAG.exec(line)?.[0] ?? "" });
    } else {
      this.#queue.push(line);
      this.#bytes += line.length;
    }
    if (!this.#writing) void this.#pump();
  }

  /**
   * Waits for the queue to be written, for at most `ms`: true when it was.
   * The exit calls it, so the last lines reach a stderr that is read.
   */
  async flush(ms: number): Promise<boolean> {
    if (!this.#writing) return true;
    const written = this.#written ??= Promise.withResolvers<void>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
    try {
      return await Promise.race([written.promise.then(() => true), limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes the queue until it is empty; `#writing` from its first line to its end. */
  async #pump(): Promise<void> {
    this.#writing = true;
    while (this.#head < this.#queue.length && !this.#failed) {
      const text = this.#take();
      try {
        await this.#output.write(encoder.encode(text));
      } catch {
        // stderr is closed: the log has nowhere to go.
        this.#failed = true;
      }
    }
    this.#queue = [];
    this.#head = 0;
    this.#bytes = 0;
    this.#writing = false;
    this.#written?.resolve();
    this.#written = undefined;
  }

  /** The next lines, whole, up to {@linkcode WRITE_BYTES} (at least one). */
  #take(): string {
    let text = "";
    while (this.#head < this.#queue.length) {
      const entry = this.#queue[this.#head]!;
      const line = typeof entry === "string"
        ? entry
        : `${entry.tag}warn: ${entry.dropped} log lines were dropped: stderr was full\n`;
      if (text !== "" && text.length + line.length > WRITE_BYTES) break;
      this.#head++;
      if (typeof entry === "string") this.#bytes -= entry.length;
      text += line;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return text;
  }
}

let processSink: LogSink | undefined;

/** The sink of this process's stderr, one for every logger of the process. */
export function stderrSink(): LogSink {
  return processSink ??= new LogSink(Deno.stderr);
}
