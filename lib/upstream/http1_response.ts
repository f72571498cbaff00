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
/** What the rest of a body may cost to keep its connection (see `#drain`). */
const DRAIN_BYTES = 64 * 1024;
const DRAIN_MS = 1000;

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
  /** The pull in progress (a drain waits for it). */
  #pulling: Promise<void> | undefined;
  /** The reader cancelled the stream: what is left of the body is drained. */
  #canceled = false;
  /** A pull found the end of the body. */
  #ended = false;
  /** The bytes that a drain dropped. */
  #drained = 0;
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
    // As fetch: a body is read once (a second read would take the next response's bytes).
    if (this.#used) throw new TypeError("the body of the response was read already");
    if (framing.kind === "none") return new ArrayBuffer(0);
    if (framing.kind !== "length") {
      const stream = this.body;
      return stream ? await new Response(stream).arrayBuffer() : new ArrayBuffer(0);
    }
    // A body of a known length: the buffered bytes, then reads into the result.
    this.#used = true;
    const connection = this.#connection;
    const out = new Uint8Array(framing.remaining);
    let at = connection.takeInto(out);
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
      pull: (controller) => {
        if (this.#canceled) return;
        if (this.#used && this.#finished) {
          return controller.error(new TypeError("the body of the response was read already"));
        }
        this.#used = true;
        return this.#pulling = this.#pullInto(controller);
      },
      cancel: () => this.#drain(),
    };
    return new ReadableStream(source);
  }

  /** One pull of the stream: the next bytes, or the end (of the body, or of the connection). */
  async #pullInto(controller: ReadableByteStreamController): Promise<void> {
    try {
      if (!await this.#pull(controller)) return;
      this.#ended = true;
      if (this.#canceled) return; // the drain finishes
      controller.close();
      controller.byobRequest?.respond(0);
      this.#finish(true);
    } catch (error) {
      if (this.#canceled) return; // the drain decides
      this.#finish(false);
      controller.error(this.#signal.aborted ? this.#signal.reason : error);
    }
  }

  /**
   * Gives the controller the next bytes of the body, or none at its end.
   * Returns true when the body has ended (with or without bytes given now).
   */
  async #pull(controller: ReadableByteStreamController): Promise<boolean> {
    const framing = this.#framing;
    if (framing.kind === "chunked") return await this.#pullChunk(controller, framing);
    const max = framing.kind === "length" ? framing.remaining : Number.MAX_SAFE_INTEGER;
    const n = await this.#readBody(max, controller);
    if (n === 0) {
      if (framing.kind === "close") return true;
      throw new HttpProtocolError("the body ended early");
    }
    if (framing.kind !== "length") return false;
    framing.remaining -= n;
    return framing.remaining === 0;
  }

  /**
   * The next bytes of a chunked body. The end of the body is found before
   * the bytes are given: a reader that stops at the event it waited for (and
   * cancels the stream) then finds the body closed, and the connection goes
   * back to the pool instead of being closed.
   */
  async #pullChunk(
    controller: ReadableByteStreamController,
    framing: { remaining: number },
  ): Promise<boolean> {
    const connection = this.#connection;
    if (framing.remaining === 0 && await this.#nextChunk(framing, await connection.line())) {
      return true;
    }
    const chunk = await this.#nextBytes(framing.remaining);
    if (chunk === null) throw new HttpProtocolError("the body ended early");
    framing.remaining -= chunk.length;
    let ended = false;
    if (framing.remaining === 0) {
      if ((await connection.line()) !== "") {
        throw new HttpProtocolError("a chunk does not end with CRLF");
      }
      // The last chunk is usually in the same packet as the one before it.
      const next = connection.bufferedLine();
      ended = next !== undefined && await this.#nextChunk(framing, next);
    }
    controller.enqueue(chunk);
    return ended;
  }

  /**
   * A reader that stops early (the link stops at the response of its
   * request) leaves the rest of the body: usually no more than the end of a
   * chunked stream, on its way. It is read and dropped, within a budget of
   * bytes and time, so that the connection can serve the next POST instead
   * of a new one (a TLS handshake); a body that goes on (a listen stream) is
   * closed with its connection.
   */
  async #drain(): Promise<void> {
    this.#canceled = true;
    // A pull in progress reads the connection too: the drain reads after it.
    await this.#pulling;
    // The pull found the end of the body (a reader cancels at the last event it wanted).
    if (this.#ended) return this.#finish(true);
    const framing = this.#framing;
    if (this.#finished || (framing.kind !== "chunked" && framing.kind !== "length")) {
      return this.#finish(false);
    }
    const timer = setTimeout(() => this.#finish(false), DRAIN_MS);
    Deno.unrefTimer(timer as unknown as number);
    const sink: Pick<ReadableByteStreamController, "byobRequest" | "enqueue"> = {
      byobRequest: null,
      enqueue: (chunk) => void (this.#drained += chunk!.byteLength),
    };
    try {
      while (!this.#finished && this.#drained <= DRAIN_BYTES) {
        if (await this.#pull(sink as ReadableByteStreamController)) return this.#finish(true);
      }
    } catch {
      // the connection failed or was closed: not reusable
    } finally {
      clearTimeout(timer);
    }
    this.#finish(false);
  }

  /** Reads a chunk-size line; at the last chunk, its trailers too. True at the end. */
  async #nextChunk(framing: { remaining: number }, line: string): Promise<boolean> {
    const connection = this.#connection;
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
    if (request?.view) {
      const length = Math.min(max, request.view.byteLength);
      const view = new Uint8Array(request.view.buffer, request.view.byteOffset, length);
      const n = connection.buffered > 0
        ? connection.takeInto(view)
        : await connection.conn.read(view);
      if (n === null) return 0;
      request.respond(n);
      return n;
    }
    const chunk = await this.#nextBytes(max);
    if (chunk === null) return 0;
    const n = chunk.length;
    controller.enqueue(chunk); // detaches the chunk's buffer
    return n;
  }

  /**
   * At most `max` bytes of the body as a chunk of their own (null at the end
   * of the connection): the buffered ones, else one read. A large remainder
   * is read into a fresh buffer (no copy); a small one through the
   * connection's buffer.
   */
  async #nextBytes(max: number): Promise<Uint8Array | null> {
    const connection = this.#connection;
    if (connection.buffered > 0) return connection.take(max);
    if (max > connection.buffer.length) {
      const chunk = new Uint8Array(Math.min(max, LARGE_READ_BYTES));
      const n = await connection.conn.read(chunk);
      return n === null ? null : chunk.subarray(0, n);
    }
    return await connection.fill() ? connection.take(max) : null;
  }
}
