/**
 * The listener (M3): one owner object holds the listen streams of the
 * upstream server, the subscribed URIs and the state, and does one change of
 * the subscriptions at a time. Revision 2025-11-25 sends list changes and
 * resource updates on the connection; revision 2026-07-28 sends them on a
 * `subscriptions/listen` stream that the bridge keeps open for the client.
 * What a lost stream leads to is the table of `stream_loss.ts`.
 *
 * @module
 */

import { type Clock, REAL_CLOCK, type TimerId } from "../clock.ts";
import { isObject, type Json, type JsonObject, type Message } from "../jsonrpc/message.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import { SUBSCRIPTION_ID_KEY } from "../upstream/envelope.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { BridgeError } from "../errors/errors.ts";
import { mapUpstreamFailure } from "../errors/failures.ts";
import { formatLimit, type Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import { CANCEL_REASONS } from "../input/pending.ts";
import { Backoff, type StreamEnd, streamEndOf } from "./stream_loss.ts";

/** The four events that the client gets, with the list that each belongs to. */
const LIST_EVENTS = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
} as const;
const UPDATED = "notifications/resources/updated";
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
const EVENTS: ReadonlySet<string> = new Set([...Object.values(LIST_EVENTS), UPDATED]);

/** Why the bridge cancels a stream (the reason goes upstream). */
const STREAM_CANCEL = {
  changed: "the subscriptions changed",
  ackTimeout: "no acknowledgment in time",
} as const;

/** The lists whose changes the initialize result declares. */
export type DeclaredLists = ReadonlySet<keyof typeof LIST_EVENTS>;

/** What the initialize result declares for the listen stream. */
export interface ListenDeclared {
  readonly lists: DeclaredLists;
  readonly subscribe: boolean;
}

/** The lists with `listChanged: true` and `resources.subscribe`, from the capabilities. */
export function listenDeclared(capabilities: Json | undefined): ListenDeclared {
  const caps = isObject(capabilities) ? capabilities : {};
  const lists = new Set<keyof typeof LIST_EVENTS>();
  for (const list of ["tools", "prompts", "resources"] as const) {
    const member = caps[list];
    if (isObject(member) && member.listChanged === true) lists.add(list);
  }
  const resources = caps.resources;
  return { lists, subscribe: isObject(resources) && resources.subscribe === true };
}

/** What the listener needs from the connection. */
export interface ListenerOptions {
  readonly session: UpstreamClient;
  readonly limits: Limits;
  readonly log: Logger;
  readonly lists: DeclaredLists;
  /** Writes a message for the client. */
  readonly write: (message: Message) => void;
  /** The log level of the client, for the `_meta` of each stream. */
  readonly logLevel: () => string | undefined;
  /** The clock of the waits and the acknowledgment limit; the real one by default. */
  readonly clock?: Clock | undefined;
}

/** One listen stream. */
interface Stream {
  readonly n: number;
  readonly controller: AbortController;
  acks: number;
  ackedAt: number | undefined;
  /** Opened after a loss: its first acknowledgment closes a gap. */
  readonly afterLoss: boolean;
  firstAck: Promise<"ack" | "ended" | "timeout">;
  ended: Promise<{ end: StreamEnd; error: BridgeError }>;
}

/** The filter of a stream for the declared lists and the URIs. */
export function streamFilter(lists: DeclaredLists, uris: Iterable<string>): JsonObject {
  const filter: JsonObject = {};
  if (lists.has("tools")) filter.toolsListChanged = true;
  if (lists.has("prompts")) filter.promptsListChanged = true;
  if (lists.has("resources")) filter.resourcesListChanged = true;
  filter.resourceSubscriptions = [...uris];
  return filter;
}

/** The owner of the listen streams of one connection. */
export class Listener {
  readonly #o: ListenerOptions;
  #uris = new Set<string>();
  #active: Stream | undefined;
  #streams = new Set<Stream>();
  #changes: Promise<void> = Promise.resolve();
  #backoff: Backoff;
  #streamCount = 0;
  #closed = false;
  /** The stream that served the client was lost, and no stream has replaced it yet. */
  #lost = false;
  /**
   * After the last unsubscribe of a client that knows no list: no stream is
   * wanted, and none opens (no wait, no sign-in) until the next subscribe.
   */
  #idle = false;
  #timers = new Set<TimerId>();
  readonly #clock: Clock;

  constructor(options: ListenerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? REAL_CLOCK;
    this.#backoff = new Backoff(
      options.limits.listen_backoff_ms,
      options.limits.listen_max_backoff_ms,
    );
  }

  /** Opens the first stream. Its acknowledgment gives one event per list, as after a gap. */
  start(): void {
    this.#enqueue(async () => {
      const stream = this.#open(this.#uris, true);
      await stream.firstAck;
    });
  }

  /**
   * resources/subscribe (`add`) or resources/unsubscribe. `reply` writes the
   * response: at the first acknowledgment of the new stream, on the reader,
   * so that it comes before the first event of that stream.
   */
  change(
    uri: string,
    add: boolean,
    reply: (outcome: { result: Json } | { error: BridgeError }) => void,
  ): void {
    this.#enqueue(async () => {
      try {
        await this.#change(uri, add, () => reply({ result: {} }));
      } catch (error) {
        reply({ error: error instanceof BridgeError ? error : BridgeError.of("invalid_response") });
      }
    });
  }

  /** Cancels every stream and waits for them. No stream opens after this call. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#clearTimers();
    const ends = [...this.#streams].map((stream) => {
      stream.controller.abort(CANCEL_REASONS.closed);
      return stream.ended;
    });
    await Promise.allSettled(ends);
  }

  #enqueue(task: () => Promise<void>): void {
    this.#changes = this.#changes.then(task).catch((error) => {
      this.#o.log.error(`listen stream: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  async #change(uri: string, add: boolean, done: () => void): Promise<void> {
    if (add === this.#uris.has(uri)) return done();
    const next = new Set(this.#uris);
    if (add) next.add(uri);
    else next.delete(uri);
    if (next.size === 0 && this.#o.lists.size === 0) {
      // The client knows no list and holds no URI: no stream, and the wait of
      // a lost one ends too. The next subscribe opens a stream after no gap.
      this.#uris = next;
      this.#idle = true;
      this.#lost = false;
      this.#clearTimers();
      const old = this.#active;
      this.#active = undefined;
      old?.controller.abort(STREAM_CANCEL.changed);
      return done();
    }
    if (this.#closed) throw BridgeError.of("not_connected");
    this.#idle = false;
    // After a loss, the stream of a change also closes a gap.
    const stream = this.#open(next, this.#lost, () => {
      // At its first acknowledgment the new stream is active: the response goes out now.
      this.#uris = next;
      done();
    });
    const first = await stream.firstAck;
    if (first === "ack") return;
    if (first === "timeout") {
      stream.controller.abort(STREAM_CANCEL.ackTimeout);
      throw BridgeError.of(
        "timeout",
        `method: subscriptions/listen, limit: ${formatLimit(this.#o.limits.listen_ack_timeout_ms)}`,
      );
    }
    throw (await stream.ended).error;
  }

  /**
   * Opens a stream for `uris`. `onFirstAck` runs on the reader at the first
   * acknowledgment, before the stream becomes active and before any of its
   * events.
   */
  #open(uris: ReadonlySet<string>, gap: boolean, onFirstAck?: () => void): Stream {
    const { session, limits, log } = this.#o;
    const controller = new AbortController();
    let resolveAck!: (value: "ack" | "ended" | "timeout") => void;
    const stream: Stream = {
      n: ++this.#streamCount,
      controller,
      acks: 0,
      ackedAt: undefined,
      afterLoss: gap,
      firstAck: new Promise((resolve) => resolveAck = resolve),
      ended: Promise.resolve({ end: "stop", error: BridgeError.of("invalid_response") }),
    };
    this.#streams.add(stream);
    const ackTimer = this.#clock.setTimeout(() => {
      log.warn(
        `listen stream ${stream.n}: no acknowledgment in ${
          formatLimit(limits.listen_ack_timeout_ms)
        }`,
      );
      resolveAck("timeout");
      controller.abort(STREAM_CANCEL.ackTimeout);
    }, limits.listen_ack_timeout_ms);
    const level = this.#o.logLevel();
    const request = session.request("subscriptions/listen", {
      notifications: streamFilter(this.#o.lists, uris),
    }, {
      signal: controller.signal,
      ...(level !== undefined && { logLevel: level }),
      onEvent: (method, params) => {
        if (method === ACKNOWLEDGED) {
          stream.acks++;
          if (stream.acks === 1) {
            this.#clock.clearTimeout(ackTimer);
            stream.ackedAt = this.#clock.now();
            onFirstAck?.();
            const old = this.#active;
            this.#active = stream;
            this.#lost = false;
            resolveAck("ack");
            if (stream.afterLoss) this.#gapEvents();
            if (old && old !== stream) old.controller.abort(STREAM_CANCEL.changed);
          } else if (this.#active === stream) {
            this.#gapEvents();
          }
          return;
        }
        if (this.#active === stream) this.#event(method, params);
      },
    });
    stream.ended = request.then(
      () => ({ end: "retry" as const, error: BridgeError.of("invalid_response") }),
      (error) => this.#classify(error, controller.signal),
    ).then((outcome) => {
      this.#clock.clearTimeout(ackTimer);
      resolveAck("ended");
      this.#streams.delete(stream);
      this.#onEnd(stream, outcome.end);
      return outcome;
    });
    return stream;
  }

  #classify(error: unknown, signal: AbortSignal): { end: StreamEnd; error: BridgeError } {
    if (signal.aborted) {
      const timeout = signal.reason === STREAM_CANCEL.ackTimeout;
      return { end: timeout ? "retry" : "stop", error: BridgeError.of("invalid_response") };
    }
    if (error instanceof UpstreamFailure) {
      return { end: streamEndOf(error, this.#o.session), error: mapUpstreamFailure(error, "", "") };
    }
    return { end: "stop", error: BridgeError.of("invalid_response") };
  }

  /**
   * A stream ended: a lost active stream gets a new one after a wait. The
   * waits double up to listen_max_backoff_ms and go on for as long as the
   * streams fail (an outage of the server outlasts any count of tries); a
   * stream that lived listen_healthy_ms resets them.
   */
  #onEnd(stream: Stream, end: StreamEnd): void {
    const { limits, log } = this.#o;
    const lived = stream.ackedAt === undefined ? 0 : this.#clock.now() - stream.ackedAt;
    if (lived >= limits.listen_healthy_ms) {
      this.#backoff.reset();
    }
    const wasActive = this.#active === stream;
    if (wasActive) {
      this.#active = undefined;
      this.#lost = true;
    }
    // Only the loss of the stream that serves the client opens a new one; a
    // stream of a change that failed leaves the old stream in place.
    if (!wasActive && stream.acks > 0) return;
    if (!wasActive && this.#active !== undefined) return;
    if (this.#closed) {
      log.debug(`listen stream ${stream.n} ended at the close`);
      return;
    }
    if (end === "after_sign_in") {
      const signIn = this.#o.session.link.nextSignIn?.();
      if (!signIn) {
        log.info(`listen stream ${stream.n} was refused; the next change opens a new one`);
        return;
      }
      log.info(`listen stream ${stream.n} was refused; a new stream opens after the next sign-in`);
      signIn.then(() => this.#reopen()).catch(() => {});
      return;
    }
    // An upstream that ended, or that can no longer take a request, gets no new stream.
    const { session } = this.#o;
    if (end === "stop" || session.end !== undefined || session.cannotSend) {
      log.info(
        `listen stream ${stream.n} ended; the next change of the subscriptions opens a new one`,
      );
      return;
    }
    const wait = this.#backoff.take();
    log.info(`listen stream ${stream.n} ended; a new stream opens in ${formatLimit(wait)}`);
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(timer);
      this.#reopen();
    }, wait);
    this.#timers.add(timer);
  }

  /**
   * The new stream after a loss, in its turn among the changes: none once the
   * listener closed, a stream serves again, or none is wanted.
   */
  #reopen(): void {
    this.#enqueue(async () => {
      if (this.#closed || this.#idle || this.#active !== undefined) return;
      await this.#open(this.#uris, true).firstAck;
    });
  }

  #clearTimers(): void {
    for (const timer of this.#timers) this.#clock.clearTimeout(timer);
    this.#timers.clear();
  }

  /** The events of a gap: one per declared list and one per subscribed URI. */
  #gapEvents(): void {
    for (const list of this.#o.lists) this.#o.write({ jsonrpc: "2.0", method: LIST_EVENTS[list] });
    for (const uri of this.#uris) {
      this.#o.write({ jsonrpc: "2.0", method: UPDATED, params: { uri } });
    }
  }

  /** One event of the active stream for the client, without the subscription id. */
  #event(method: string, params: JsonObject): void {
    if (!EVENTS.has(method)) return;
    if (method === UPDATED && typeof params.uri !== "string") return;
    const out: JsonObject = { ...params };
    if (isObject(out._meta)) {
      const { [SUBSCRIPTION_ID_KEY]: _id, ...rest } = out._meta;
      if (Object.keys(rest).length === 0) delete out._meta;
      else out._meta = rest;
    }
    this.#o.write(
      Object.keys(out).length === 0
        ? { jsonrpc: "2.0", method }
        : { jsonrpc: "2.0", method, params: out },
    );
  }
}
