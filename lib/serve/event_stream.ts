/**
 * One SSE stream of `serve`: the body of a response of `text/event-stream`
 * that carries messages for the client, one event each (`data: <JSON>`).
 * The messages go through the bridge's message writer (the order of the
 * calls, the batches, a large result in slices), and a stage turns its
 * lines into events as they pass, without a copy of a large line.
 *
 * Bounded: the body's queue holds {@linkcode BODY_QUEUE_BYTES}; past it the
 * writer waits and its backlog grows, which {@linkcode EventStream.hold}
 * reports (the session's readers wait); a backlog above the hard limit
 * means a client that reads nothing: the stream is cut and what it still
 * gets is dropped. A comment line every {@linkcode KEEP_ALIVE_MS} keeps a
 * quiet stream open through proxies (nginx closes a response that is quiet
 * for 60 s by default).
 *
 * @module
 */

import type { Message } from "../jsonrpc/message.ts";
import { MessageWriter } from "../jsonrpc/writer.ts";

/** The bytes that the body of a stream queues for a slow reader. */
export const BODY_QUEUE_BYTES = 64 * 1024;

/** How often a quiet stream gets a comment line. */
export const KEEP_ALIVE_MS = 25_000;

const enc = new TextEncoder();
const DATA = enc.encode("data: ");
const EVENT_END = enc.encode("\n\n");
const KEEP_ALIVE = enc.encode(": keep-alive\n\n");
const LF = 0x0a;

/**
 * The error that ends the body of a stream that was cut: `serve`'s error
 * handler knows it (the stream logged its own line) and prints no stack.
 */
export class StreamCut extends Error {
  override name = "StreamCut";
  constructor() {
    super("the client reads nothing");
  }
}

/** Options of an {@linkcode EventStream}. */
export interface EventStreamOptions {
  /**
   * The backlog above which the client counts as one that reads nothing: the
   * stream is cut. At least the largest message.
   */
  readonly maxBacklogBytes: number;
  /** Called once when the stream ends: the client went away, it was cut, or closed. */
  readonly onEnd?: (why: "gone" | "cut" | "closed") => void;
  /** {@linkcode KEEP_ALIVE_MS} by default (tests pass a short one). */
  readonly keepAliveMs?: number;
}

/** An SSE stream for the client, and its writer. */
export class EventStream {
  /** The body of the response. */
  readonly body: ReadableStream<Uint8Array>;
  readonly #writer: MessageWriter;
  readonly #o: EventStreamOptions;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #pulled: PromiseWithResolvers<void> | undefined;
  /** The stage is at the start of a line (between two events). */
  #atLineStart = true;
  #busy = false;
  #ended = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: EventStreamOptions) {
    this.#o = options;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => {
        this.#pulled?.resolve();
        this.#pulled = undefined;
      },
      cancel: () => this.#end("gone"),
    }, new ByteLengthQueuingStrategy({ highWaterMark: BODY_QUEUE_BYTES }));
    this.#writer = new MessageWriter(
      new WritableStream<Uint8Array>({
        write: (chunk) => this.#frame(chunk),
        close: () => this.#end("closed"),
      }),
      // The stage copies nothing it needs later: the chunks of a batch are its own.
      { reuseBuffer: false },
    );
    this.#timer = setInterval(() => this.#keepAlive(), options.keepAliveMs ?? KEEP_ALIVE_MS);
  }

  /** True until the stream ended (closed, cut, or its client went away). */
  get open(): boolean {
    return !this.#ended;
  }

  /** Queues one message as one event; dropped once the stream ended. */
  send(message: Message): void {
    if (this.#ended) return;
    this.#writer.send(message);
    if (this.#writer.backlog > this.#o.maxBacklogBytes) this.#end("cut");
  }

  /** A promise while the client is behind, as the writer's. */
  hold(): Promise<void> | undefined {
    return this.#ended ? undefined : this.#writer.hold();
  }

  /** Sends what is queued, then ends the body. */
  close(): Promise<void> {
    return this.#writer.close();
  }

  /** Turns the writer's lines into events: `data: ` before a line, a blank line after it. */
  async #frame(chunk: Uint8Array): Promise<void> {
    if (this.#ended) throw new Error("the stream ended");
    this.#busy = true;
    let start = 0;
    while (start < chunk.length) {
      if (this.#atLineStart) {
        this.#controller.enqueue(DATA);
        this.#atLineStart = false;
      }
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        this.#controller.enqueue(chunk.subarray(start));
        break;
      }
      if (nl > start) this.#controller.enqueue(chunk.subarray(start, nl));
      this.#controller.enqueue(EVENT_END);
      this.#atLineStart = true;
      start = nl + 1;
    }
    this.#busy = false;
    // The writer waits while the body is full: its backlog then shows the client's pace.
    while (!this.#ended && (this.#controller.desiredSize ?? 0) <= 0) {
      this.#pulled ??= Promise.withResolvers<void>();
      await this.#pulled.promise;
    }
  }

  #keepAlive(): void {
    if (this.#ended || this.#busy || !this.#atLineStart || this.#writer.backlog > 0) return;
    this.#controller.enqueue(KEEP_ALIVE);
  }

  #end(why: "gone" | "cut" | "closed"): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#timer);
    this.#pulled?.resolve();
    if (why !== "gone") {
      try {
        if (why === "cut") this.#controller.error(new StreamCut());
        else this.#controller.close();
      } catch {
        // The body was canceled meanwhile.
      }
    }
    // The writer's later messages are dropped: its sink refuses them.
    if (why !== "closed") void this.#writer.close();
    this.#o.onEnd?.(why);
  }
}
