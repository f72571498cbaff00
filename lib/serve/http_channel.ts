/**
 * The HTTP face of one session of `serve` (revision 2025-11-25 Streamable
 * HTTP): where each message of the front end goes.
 *
 * - A message of a request (its response, progress, the input requests of
 *   its rounds and their cancellations, `elicitation/complete`, the log
 *   messages of its exchange) goes on the stream of that request's POST.
 *   A request that the front end answers at once (ping, logging/setLevel,
 *   an error) gets its response as one JSON body; any other request gets an
 *   SSE stream that ends after its response, or once it is over without one
 *   (a cancellation).
 * - Any other message (list changes, resource updates, a log message of no
 *   known request, the requests of an older upstream server) goes on the
 *   session's GET stream; while none is open, it waits in a queue bounded
 *   in count ({@linkcode MAX_WAITING}) and in bytes (the backlog limit of a
 *   stream): past either, the oldest go, with one debug line for each run
 *   of drops. A new GET stream gets them under its back pressure, never more
 *   than its client reads, so that the backlog never cuts it. A message of a
 *   request whose POST has gone (the client dropped the connection) goes
 *   there too, its response excepted: that one has no place left and is
 *   dropped with a debug line.
 *
 * Nothing of one session reaches another: each session has a channel of its
 * own, and a message only goes to this channel's streams.
 *
 * @module
 */

import type { ClientChannel } from "../frontend/channel.ts";
import { type ErrorObject, idKey, type Message, type RequestId } from "../jsonrpc/message.ts";
import type { Logger } from "../log.ts";
import { EventStream } from "./event_stream.ts";

/** Messages of no request that wait for a GET stream, at most. */
export const MAX_WAITING = 1_000;

/** The text of a message that waits: its size (as the stream's writer counts it). */
function textBytes(message: Message): number {
  try {
    return (JSON.stringify(message)?.length ?? 0) + 1;
  } catch {
    return 1; // the writer drops it
  }
}

/** The backlog of one stream above which its client counts as gone (it reads nothing). */
export const STREAM_MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

/** What a POST of a request became once the front end has taken it. */
export type PostReply =
  /** The response came at once: one JSON body. */
  | { readonly kind: "json"; readonly message: Message }
  /** An SSE stream: its messages, and at last the response. */
  | { readonly kind: "stream"; readonly stream: EventStream };

/** The POST of one request, while the session knows it. */
interface Post {
  readonly id: RequestId;
  /** Before the front end has taken the request: what it sent at once. */
  early: Message[] | undefined;
  stream: EventStream | undefined;
}

/** Options of an {@linkcode HttpChannel}. */
export interface HttpChannelOptions {
  readonly log: Logger;
  /** Called when a stream opens or ends: the session's idle timer counts them. */
  readonly onActivity?: () => void;
  /** {@linkcode STREAM_MAX_BACKLOG_BYTES} by default. */
  readonly maxBacklogBytes?: number;
  /** The keep-alive of the streams (tests pass a short one). */
  readonly keepAliveMs?: number;
}

/** True for the response of the request `id` (a result or an error with that id). */
function isResponseTo(message: Message, key: string): boolean {
  return !("method" in message) && "id" in message && message.id !== null &&
    idKey(message.id) === key;
}

/** The channel of one session. */
export class HttpChannel implements ClientChannel {
  readonly #o: HttpChannelOptions;
  readonly #posts = new Map<string, Post>();
  #get: EventStream | undefined;
  /** Messages of no request that wait for the GET stream (or for its client to read). */
  #waiting: { message: Message; bytes: number }[] = [];
  #waitingBytes = 0;
  /** The messages dropped from {@linkcode #waiting} since the last line about them. */
  #dropped = 0;
  /** The queue goes into the GET stream, as fast as its client reads. */
  #pumping = false;
  #closed = false;

  constructor(options: HttpChannelOptions) {
    this.#o = options;
  }

  /** The streams open now (POST streams and the GET stream). */
  get openStreams(): number {
    let n = this.#get?.open ? 1 : 0;
    for (const post of this.#posts.values()) if (post.stream?.open) n++;
    return n;
  }

  /** True while a POST of the request `id` waits for its response. */
  hasPost(id: RequestId): boolean {
    return this.#posts.has(idKey(id));
  }

  /**
   * Opens the place of a request's POST before the front end takes it: what
   * the front end sends for it at once stays here until {@linkcode reply}.
   */
  openPost(id: RequestId): void {
    this.#posts.set(idKey(id), { id, early: [], stream: undefined });
  }

  /**
   * After the front end took the request: one JSON body when its response
   * came at once and alone, else an SSE stream with what came, on which the
   * rest follows. `onDone` runs when the exchange is over (the response
   * went, or the client went away).
   */
  reply(id: RequestId, onDone?: () => void): PostReply {
    const key = idKey(id);
    const post = this.#posts.get(key)!;
    const early = post.early ?? [];
    post.early = undefined;
    if (early.length === 1 && isResponseTo(early[0]!, key)) {
      this.#posts.delete(key);
      onDone?.();
      return { kind: "json", message: early[0]! };
    }
    const stream = this.#stream(() => {
      if (this.#posts.get(key) === post) this.#posts.delete(key);
      onDone?.();
    });
    post.stream = stream;
    for (const message of early) this.#toPost(post, key, message);
    return { kind: "stream", stream };
  }

  /**
   * Opens the session's GET stream; a newer GET takes the place of the older
   * one, which ends (a client that reconnects after a network change). The
   * messages that waited for it go first.
   */
  openGet(): EventStream {
    const old = this.#get;
    const stream = this.#stream(() => {
      if (this.#get === stream) this.#get = undefined;
    });
    this.#get = stream;
    void old?.close();
    this.#reportDropped();
    void this.#pump();
    return stream;
  }

  send(message: Message, related?: RequestId): void {
    if (this.#closed) return;
    const key = related === undefined ? undefined : idKey(related);
    const post = key === undefined ? undefined : this.#posts.get(key);
    if (post && key !== undefined && (post.early || post.stream?.open)) {
      this.#toPost(post, key, message);
      return;
    }
    if (key !== undefined && isResponseTo(message, key)) {
      this.#o.log.debug("dropped a response: the client closed the connection of its request");
      return;
    }
    this.#unrelated(message);
  }

  /**
   * The request `id` is over without a response (it was canceled): its
   * stream ends, as a response would end it. The front end says so once the
   * request's task has settled, always after {@linkcode reply}.
   */
  unanswered(id: RequestId): void {
    const key = idKey(id);
    const post = this.#posts.get(key);
    if (!post?.stream) return; // its POST went away already
    this.#posts.delete(key);
    void post.stream.close();
  }

  /**
   * Answers each request whose POST still waits for its response with the
   * error `error` (the end of `serve` after its grace): one answer each, and
   * a later response of the front end is dropped. Returns how many.
   */
  answerEach(error: ErrorObject): number {
    let answered = 0;
    for (const [key, post] of [...this.#posts]) {
      if (!post.early && !post.stream?.open) continue;
      answered++;
      this.#toPost(post, key, { jsonrpc: "2.0", id: post.id, error });
    }
    return answered;
  }

  #toPost(post: Post, key: string, message: Message): void {
    if (post.early) {
      post.early.push(message);
      return;
    }
    post.stream!.send(message);
    // The response ends the stream of its request.
    if (isResponseTo(message, key)) {
      this.#posts.delete(key);
      void post.stream!.close();
    }
  }

  #unrelated(message: Message): void {
    if (this.#get?.open && this.#waiting.length === 0) {
      this.#get.send(message);
      return;
    }
    const bytes = textBytes(message);
    const max = this.#maxBytes;
    this.#waiting.push({ message, bytes });
    this.#waitingBytes += bytes;
    // The newest stays, even alone above the bound (a stream takes it: the line limit is lower).
    while (
      this.#waiting.length > 1 &&
      (this.#waiting.length > MAX_WAITING || this.#waitingBytes > max)
    ) {
      this.#waitingBytes -= this.#waiting.shift()!.bytes;
      this.#dropped++;
    }
    if (this.#get?.open) void this.#pump();
  }

  get #maxBytes(): number {
    return this.#o.maxBacklogBytes ?? STREAM_MAX_BACKLOG_BYTES;
  }

  /** One line for the messages dropped since the last one. */
  #reportDropped(): void {
    if (this.#dropped === 0) return;
    const n = this.#dropped;
    this.#dropped = 0;
    this.#o.log.debug(
      `dropped the ${n} oldest message${n === 1 ? "" : "s"} that waited for the GET stream: ` +
        `more than ${MAX_WAITING} messages or ${this.#maxBytes} bytes waited`,
    );
  }

  /**
   * Moves the waiting messages into the GET stream while its client takes
   * them: a backlog that waited for it never cuts it. What its end leaves
   * waits for the next GET stream.
   */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#waiting.length > 0 && this.#get?.open && !this.#closed) {
        const hold = this.#get.hold();
        if (hold) {
          await hold;
          continue;
        }
        const next = this.#waiting.shift()!;
        this.#waitingBytes -= next.bytes;
        this.#get.send(next.message);
      }
    } finally {
      this.#pumping = false;
    }
    this.#reportDropped();
  }

  #stream(onGone: () => void): EventStream {
    const stream = new EventStream({
      maxBacklogBytes: this.#o.maxBacklogBytes ?? STREAM_MAX_BACKLOG_BYTES,
      ...(this.#o.keepAliveMs !== undefined && { keepAliveMs: this.#o.keepAliveMs }),
      onEnd: (why) => {
        if (why === "cut") this.#o.log.warn("cut a stream whose client reads nothing");
        onGone();
        this.#o.onActivity?.();
      },
    });
    this.#o.onActivity?.();
    return stream;
  }

  hold(): Promise<void> | undefined {
    const holds: Promise<void>[] = [];
    const streams = [this.#get, ...[...this.#posts.values()].map((post) => post.stream)];
    for (const stream of streams) {
      const hold = stream?.hold();
      if (hold) holds.push(hold);
    }
    return holds.length === 0 ? undefined : Promise.all(holds).then(() => {});
  }

  /** Sends what every stream holds, then ends them; later messages are dropped. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#reportDropped();
    this.#waiting = [];
    this.#waitingBytes = 0;
    const streams = [this.#get, ...[...this.#posts.values()].map((post) => post.stream)];
    this.#posts.clear();
    await Promise.allSettled(streams.map((stream) => stream?.close()));
  }
}
