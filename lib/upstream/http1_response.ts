/**
 * The response of a POST of the HTTP/1.1 client (`http1.ts`): its status,
 * its header fields, and its body, read once. A small JSON body is read
 * straight from the connection's buffer ({@linkcode Http1Response.arrayBuffer});
 * a stream is made only for a body that the link streams (SSE) or reads in
 * place (a large JSON body: a BYOB reader gets the bytes read into its own
 * buffer).
 *
 * @module
 */

import type { PostResponse } from "./post_transport.ts";
import {
  type Connection,
  type Framing,
  framingOf,
  type Head,
  HttpProtocolError,
} from "./http1_wire.ts";

/** A read of a large body without a reader's buffer gets a buffer of this size. */
const LARGE_READ_BYTES = 256 * 1024;

/** Enqueues a chunk (which detaches its buffer); returns its length. */
function enqueue(controller: ReadableByteStreamController, chunk: Uint8Array): number {
  const length = chunk.length;
  controller.enqueue(chunk);
  return length;
}

/**
 * The response of one POST. Its body is read once: either whole by
 * {@linkcode arrayBuffer} (a body of a known length straight from the
 * connection) or through {@linkcode body}, a byte stream made when asked for.
 * The connection goes back to the pool when the body has been read to its
 * end, and is closed when the body is cancelled or fails.
 */
export class Http1Response implements PostResponse {
  readonly status: number;
  readonly headers: Head["headers"];
  readonly #framing: Framing;
  readonly #connection: Connection;
  readonly #release: (connection: Connection, reusable: boolean) => void;
  readonly #signal: AbortSignal;
  readonly #onAbort: () => void;
  readonly #keepAlive: boolean;
  #stream: ReadableStream<Uint8Array> | null | undefined;
  /** The body has been read from: by a pull of the stream, or by arrayBuffer. */
  #used = false;
  #finished = false;

  /** `release` takes the connection back when the body is done with it. */
  constructor(
    release: (connection: Connection, reusable: boolean) => void,
    connection: Connection,
    head: Head,
    signal: AbortSignal,
    onAbort: () => void,
  ) {
    this.#release = release;
    this.#connection = connection;
    this.status = head.status;
    this.headers = head.headers;
    this.#keepAlive = head.keepAlive;
    this.#framing = framingOf(head);
    this.#signal = signal;
    this.#onAbort = onAbort;
    if (this.#framing.kind === "none") {
      this.#stream = null;
      this.#finish(true);
    }
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#stream === undefined) this.#stream = this.#makeStream();
    return this.#stream;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const framing = this.#framing;
    if (framing.kind === "none") return new ArrayBuffer(0);
    if (this.#used || framing.kind !== "length") {
      const stream = this.body;
      return stream ? await new Response(stream).arrayBuffer() : new ArrayBuffer(0);
    }
    // A body of a known length: the buffered bytes, then reads into the result.
    this.#used = true;
    const connection = this.#connection;
    const out = new Uint8Array(framing.remaining);
    let at = Math.min(out.length, connection.buffered);
    out.set(connection.buffer.subarray(connection.start, connection.start + at));
    connection.start += at;
    try {
      while (at < out.length) {
        const n = await connection.conn.read(out.subarray(at));
        if (n === null) throw new HttpProtocolError("the body ended early");
        at += n;
      }
    } catch (error) {
      this.#finish(false);
      throw this.#signal.aborted ? this.#signal.reason : error;
    }
    framing.remaining = 0;
    this.#finish(true);
    return out.buffer;
  }

  /** The connection goes back to the pool only after a body read to its end. */
  #finish(ended: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#signal.removeEventListener("abort", this.#onAbort);
    const reusable = ended && this.#keepAlive && this.#framing.kind !== "close" &&
      this.#connection.buffered === 0;
    this.#release(this.#connection, reusable);
  }

  #makeStream(): ReadableStream<Uint8Array> {
    const source: UnderlyingByteSource = {
      type: "bytes",
      pull: async (controller) => {
        this.#used = true;
        try {
          if (await this.#pull(controller)) {
            controller.close();
            controller.byobRequest?.respond(0);
            this.#finish(true);
          }
        } catch (error) {
          this.#finish(false);
          controller.error(this.#signal.aborted ? this.#signal.reason : error);
        }
      },
      cancel: () => this.#finish(false),
    };
    return new ReadableStream(source);
  }

  /**
   * Gives the controller the next bytes of the body, or none at its end.
   * Returns true when the body has ended (with or without bytes given now).
   */
  async #pull(controller: ReadableByteStreamController): Promise<boolean> {
    const connection = this.#connection;
    const framing = this.#framing;
    if (framing.kind === "chunked" && framing.remaining === 0) {
      if (await this.#nextChunk(connection, framing, await connection.line())) return true;
    }
    const max = framing.kind === "length" || framing.kind === "chunked"
      ? framing.remaining
      : Number.MAX_SAFE_INTEGER;
    const n = await this.#readBody(max, controller);
    if (n === 0) {
      if (framing.kind === "close") return true;
      throw new HttpProtocolError("the body ended early");
    }
    switch (framing.kind) {
      case "length":
        framing.remaining -= n;
        return framing.remaining === 0;
      case "chunked": {
        framing.remaining -= n;
        if (framing.remaining > 0) return false;
        if ((await connection.line()) !== "") {
          throw new HttpProtocolError("a chunk does not end with CRLF");
        }
        // The last chunk is usually in the same packet: end the body now when it is, so
        // that a reader that stops at its last event leaves a connection to reuse.
        const next = connection.bufferedLine();
        return next !== undefined && await this.#nextChunk(connection, framing, next);
      }
      default:
        return false;
    }
  }

  /** Reads a chunk-size line; at the last chunk, its trailers too. True at the end. */
  async #nextChunk(
    connection: Connection,
    framing: { remaining: number },
    line: string,
  ): Promise<boolean> {
    const size = line.split(";", 1)[0]!.trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(size)) throw new HttpProtocolError("a bad chunk size");
    framing.remaining = parseInt(size, 16);
    if (framing.remaining > 0) return false;
    // The trailers end with an empty line.
    while ((await connection.line()) !== "");
    return true;
  }

  /**
   * Gives at most `max` bytes of the body to the controller: the buffered
   * ones first, else one read, into the reader's own buffer when it has one.
   * Returns how many (0 at the end of the connection).
   */
  async #readBody(max: number, controller: ReadableByteStreamController): Promise<number> {
    const connection = this.#connection;
    const request = controller.byobRequest;
    if (connection.buffered > 0) {
      if (request?.view) {
        const view = new Uint8Array(request.view.buffer, request.view.byteOffset);
        const n = Math.min(max, connection.buffered, request.view.byteLength);
        view.set(connection.buffer.subarray(connection.start, connection.start + n));
        connection.start += n;
        request.respond(n);
        return n;
      }
      return enqueue(controller, connection.take(max));
    }
    if (request?.view) {
      const length = Math.min(max, request.view.byteLength);
      const view = new Uint8Array(request.view.buffer, request.view.byteOffset, length);
      const n = await connection.conn.read(view);
      if (n === null) return 0;
      request.respond(n);
      return n;
    }
    if (max > connection.buffer.length) {
      // A large body without a reader's buffer: read into a fresh buffer, no copy.
      const chunk = new Uint8Array(Math.min(max, LARGE_READ_BYTES));
      const n = await connection.conn.read(chunk);
      if (n === null) return 0;
      controller.enqueue(chunk.subarray(0, n));
      return n;
    }
    if (!await connection.fill()) return 0;
    return enqueue(controller, connection.take(max));
  }
}
