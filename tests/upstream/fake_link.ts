/**
 * A fake upstream link in the same process, for the unit tests of the
 * upstream client: the link is the client's only peer, and the test plays
 * the upstream server frame by frame.
 */

import type { JsonObject, Message } from "../../lib/jsonrpc/message.ts";
import type { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";

/** A link whose frames, end and send results the test decides. */
export class FakeLink implements UpstreamLink {
  readonly isRemote = false;
  /** True: the requests of the client get no time limit (as over the memory link). */
  untimed = false;
  /** Every message that the client sent, in order. */
  readonly sent: Message[] = [];
  /** How many frames `read` gave to the client. */
  delivered = 0;
  /** How many times the client called `close`. */
  closes = 0;
  /** When true, `send` rejects as a closed link does. */
  sendFails = false;
  readonly ended: Promise<LinkEnd>;
  readonly #sendEnded = Promise.withResolvers<UpstreamFailure>();
  /** Resolves at {@linkcode endSend}. */
  readonly sendEnded: Promise<UpstreamFailure> = this.#sendEnded.promise;
  #sendFailure: UpstreamFailure | undefined;
  readonly #queue: (UpstreamFrame | "end")[] = [];
  #wake: (() => void) | undefined;
  #endLink!: (end: LinkEnd) => void;
  #reading = false;

  constructor() {
    this.ended = new Promise((resolve) => this.#endLink = resolve);
  }

  async read(onFrame: FrameSink): Promise<void> {
    if (this.#reading) throw new Error("read called twice");
    this.#reading = true;
    for (;;) {
      while (this.#queue.length === 0) await new Promise<void>((r) => this.#wake = r);
      const frame = this.#queue.shift()!;
      if (frame === "end") return;
      this.delivered++;
      await onFrame(frame);
    }
  }

  send(message: Message): Promise<void> {
    if (this.sendFails) return Promise.reject(new Error("the link is closed"));
    if (this.#sendFailure) return Promise.reject(this.#sendFailure);
    this.sent.push(message);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closes++;
    this.end({ kind: "closed" });
    return Promise.resolve();
  }

  /**
   * The link can no longer send while the server runs on (a child that closed
   * its stdin): each later send rejects with `failure`.
   */
  endSend(failure: UpstreamFailure): void {
    this.#sendFailure = failure;
    this.#sendEnded.resolve(failure);
  }

  /** The upstream server writes a frame. */
  frame(frame: UpstreamFrame): void {
    this.#queue.push(frame);
    this.#wake?.();
  }

  /** The upstream server writes a message. */
  message(value: JsonObject): void {
    this.frame({ kind: "message", value });
  }

  /** The output of the upstream server ends; the link itself may not. */
  endOutput(): void {
    this.#queue.push("end");
    this.#wake?.();
  }

  /** The output ends and the link ends with `end`. */
  end(end: LinkEnd): void {
    this.endOutput();
    this.#endLink(end);
  }

  /** The sent requests (with an id and a method). */
  requests(): { id: number; method: string; params: JsonObject }[] {
    return this.sent.filter((m) => "method" in m && "id" in m) as never;
  }

  /** The sent notifications. */
  notifications(): { method: string; params: JsonObject }[] {
    return this.sent.filter((m) => "method" in m && !("id" in m)) as never;
  }
}
