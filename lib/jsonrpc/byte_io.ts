/**
 * The two ends of a byte pipe, as web streams, or as Deno's plain readers
 * and writers (`Deno.stdin`, `Deno.stdout`). The CLI reads and writes its
 * stdio without a stream stage: a web stream costs a pull, a 64 KiB allocation and several
 * promises per chunk, about a fifth of the bridge's CPU time per small call in
 * the benchmark, where a plain read costs one op.
 *
 * A web stream is told from a plain reader or writer by its shape (a
 * `getReader`, a `getWriter`), not by `instanceof`: Deno loads its web
 * streams (`ext:deno_web/06_streams.js`) the first time a program names the
 * global `ReadableStream` or `WritableStream`, about 1.5 MB of RSS, and the
 * log's sink opens `Deno.stderr` through here even for `--version`.
 *
 * @module
 */

import { untilAborted } from "./abortable.ts";

/** A source that reads into a buffer, as `Deno.stdin` does. */
export interface ByteReader {
  read(buffer: Uint8Array): Promise<number | null>;
}

/** A sink that writes a part of a buffer, as `Deno.stdout` does. */
export interface ByteWriter {
  write(bytes: Uint8Array): Promise<number>;
  close?(): void;
}

/**
 * What {@linkcode readChunks} and {@linkcode openSink} take.
 *
 * @example
 * ```ts
 * import { type ByteInput, readChunks } from "./byte_io.ts";
 * const input: ByteInput = new Response("ab").body!;
 * const source = readChunks(input);
 * const chunk = await source.next();
 * if (new TextDecoder().decode(chunk!) !== "ab") throw new Error();
 * if ((await source.next()) !== null) throw new Error("the end of the input");
 * source.release();
 * ```
 */
export type ByteInput = ReadableStream<Uint8Array> | ByteReader;

/**
 * What {@linkcode openSink} takes: a web stream, or a writer that may write a
 * part of each buffer (`Deno.stdout`).
 *
 * @example
 * ```ts
 * import { type ByteOutput, openSink } from "./byte_io.ts";
 * const chunks: Uint8Array[] = [];
 * const output: ByteOutput = new WritableStream({ write: (chunk) => void chunks.push(chunk) });
 * const sink = openSink(output);
 * await sink.write(new Uint8Array([1, 2]));
 * await sink.close();
 * if (chunks.length !== 1 || chunks[0]!.length !== 2) throw new Error();
 * ```
 */
export type ByteOutput = WritableStream<Uint8Array> | ByteWriter;

/** The chunks of an input, one read at a time. */
export interface ChunkSource {
  /** The next chunk, or null at the end of the input. */
  next(): Promise<Uint8Array | null>;
  /** Ends a pending read (an abort); later reads give null. */
  cancel(): void;
  /** Lets go of the input after the last read. */
  release(): void;
  /**
   * True when each chunk is the reader's own (a buffer no one else holds): a
   * framer may then give back the memory of a chunk that it has copied.
   */
  readonly owned: boolean;
}

/** The size of one read of a {@linkcode ByteReader}. */
export const READ_BYTES = 64 * 1024;

/**
 * A chunk this small is copied out of the read buffer, which is then used
 * again; a larger one keeps the buffer, and the next read gets a new one. A
 * chunk is never a view of a buffer that a later read fills: the frames and
 * the large lines keep views of their chunks.
 */
const COPY_BELOW = 16 * 1024;

/** True for a web stream (it has `getReader`), without naming the global `ReadableStream`. */
export function isReadableStream(input: ByteInput): input is ReadableStream<Uint8Array> {
  return typeof (input as Partial<ReadableStream<Uint8Array>>).getReader === "function";
}

/** True for a web stream (it has `getWriter`), without naming the global `WritableStream`. */
export function isWritableStream(output: ByteOutput): output is WritableStream<Uint8Array> {
  return typeof (output as Partial<WritableStream<Uint8Array>>).getWriter === "function";
}

/**
 * Opens an input for reading chunk by chunk.
 */
export function readChunks(input: ByteInput): ChunkSource {
  if (isReadableStream(input)) {
    const byob = byobReader(input);
    if (byob) {
      return bufferedSource(async (buffer) => {
        const { done, value } = await byob.read(buffer);
        return done || !value ? null : value;
      }, byob);
    }
    const reader = input.getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? null : value;
      },
      cancel: () => void reader.cancel().catch(() => {}),
      release: () => reader.releaseLock(),
      owned: false, // the chunks of the caller's stream
    };
  }
  return bufferedSource(async (buffer) => {
    const n = await input.read(buffer);
    return n === null ? null : buffer.subarray(0, n);
  });
}

/** A BYOB reader of a byte stream (a pipe of a child), or undefined for another stream. */
function byobReader(input: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | undefined {
  try {
    return input.getReader({ mode: "byob" });
  } catch {
    return undefined; // not a byte stream
  }
}

/** One read: the chunk read into (a view of) the buffer, or null at the end. */
type Read = (buffer: Uint8Array<ArrayBuffer>) => Promise<Uint8Array<ArrayBuffer> | null>;

/**
 * Reads into one buffer while the chunks are small. Each read of a byte
 * stream's default reader allocates a new zeroed 64 KiB buffer, and touching
 * it costs page faults: about 14 µs per small chunk here, a tenth of the
 * bridge's time per small call. A BYOB read hands the buffer back (in a new
 * view) each time.
 */
function bufferedSource(read: Read, reader?: ReadableStreamBYOBReader): ChunkSource {
  let buffer = new Uint8Array(READ_BYTES);
  const canceled = new AbortController();
  return {
    next: async () => {
      if (canceled.signal.aborted) return null;
      const value = await untilAborted(read(buffer), canceled.signal, null);
      if (value === null || canceled.signal.aborted) return null;
      if (value.length < COPY_BELOW) {
        // The view of a BYOB read is the buffer's memory under a new ArrayBuffer.
        buffer = new Uint8Array(value.buffer, 0, READ_BYTES);
        return value.slice();
      }
      buffer = new Uint8Array(READ_BYTES);
      return value;
    },
    cancel: () => {
      canceled.abort();
      reader?.cancel().catch(() => {});
    },
    release: () => reader?.releaseLock(),
    owned: true,
  };
}

/** The writing end of an output: each write takes the whole chunk. */
export interface ChunkSink {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens an output for writing whole chunks.
 */
export function openSink(output: ByteOutput): ChunkSink {
  if (isWritableStream(output)) {
    const writer = output.getWriter();
    return { write: (chunk) => writer.write(chunk), close: () => writer.close() };
  }
  return {
    write: async (chunk) => {
      let written = await output.write(chunk);
      while (written < chunk.length) written += await output.write(chunk.subarray(written));
    },
    close: () => {
      output.close?.();
      return Promise.resolve();
    },
  };
}
