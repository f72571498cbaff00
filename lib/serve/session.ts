/**
 * One client session of `serve`: a front end of its own (the same state
 * machine, tables and rules as the stdio bridge) behind the HTTP face of
 * its channel. Its POSTs give it the client's messages, its GET stream the
 * messages of no request; a DELETE, the idle limit or the end of `serve`
 * end it as the end of stdin ends a stdio bridge.
 *
 * @module
 */

import { BridgeError } from "../errors/errors.ts";
import { Frontend } from "../frontend/frontend.ts";
import type { FrontendSettings } from "../frontend/frontend_options.ts";
import type { Inbound } from "../frontend/inbound.ts";
import type { Message } from "../jsonrpc/message.ts";
import type { Logger } from "../log.ts";
import { HttpChannel } from "./http_channel.ts";
import { httpError, rpcErrorOf } from "./http_errors.ts";

/** The headers of an SSE stream. */
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  // nginx: no buffering of the stream (README, "Several replicas behind nginx").
  "x-accel-buffering": "no",
};

/**
 * How long a session may take to complete its initialization (its client's
 * `notifications/initialized`) before it ends as an idle one: a client that
 * only sends initialize must not hold one of `--max-sessions` for the idle
 * limit.
 */
export const INIT_TIMEOUT_MS = 30_000;

/** Options of a {@linkcode ServeSession}. */
export interface SessionOptions {
  /** Its `Mcp-Session-Id`: a secret of its client, never logged. */
  readonly id: string;
  /** Its short name in the log (`#3`: the sessions of a process are counted). */
  readonly label: string;
  /** The front end's settings, with a log that names the session. */
  readonly settings: FrontendSettings;
  /** How long the session may have no stream and no request in flight. */
  readonly idleMs: number;
  /** {@linkcode INIT_TIMEOUT_MS} by default (tests pass a short one). */
  readonly initTimeoutMs?: number;
  /** Called once when the session has ended. */
  readonly onEnd: (session: ServeSession) => void;
  /** The keep-alive of its streams (tests pass a short one). */
  readonly keepAliveMs?: number;
}

/** One session. */
export class ServeSession {
  readonly id: string;
  readonly label: string;
  readonly #o: SessionOptions;
  readonly #frontend: Frontend;
  readonly #channel: HttpChannel;
  readonly #log: Logger;
  /** The back pressure of the last message while it holds: the next request waits for it. */
  #held: Promise<void> | undefined;
  /** The requests that wait for {@linkcode #held}. */
  #waiting = 0;
  /**
   * The wake-ups of the requests that wait for {@linkcode #held}: `serve`'s
   * stop wakes them (they are answered `stopping`). A set that each waiter
   * leaves, not a reaction on a promise that settles only at the stop, which
   * would keep one per request that ever waited.
   */
  readonly #wakers = new Set<() => void>();
  #refusing = false;
  #idle: ReturnType<typeof setTimeout> | undefined;
  /** From the answer of initialize until its client sent `notifications/initialized`. */
  #init: ReturnType<typeof setTimeout> | undefined;
  #initialized = false;
  #ending: Promise<void> | undefined;

  constructor(options: SessionOptions) {
    this.#o = options;
    this.id = options.id;
    this.label = options.label;
    this.#log = options.settings.log;
    this.#channel = new HttpChannel({
      log: this.#log,
      onActivity: () => this.#touch(),
      ...(options.keepAliveMs !== undefined && { keepAliveMs: options.keepAliveMs }),
    });
    this.#frontend = new Frontend({ ...options.settings, channel: this.#channel });
    this.#touch();
  }

  /** The state of its front end. */
  get state(): string {
    return this.#frontend.state;
  }

  /** The requests of its client in flight. */
  get inFlight(): number {
    return this.#frontend.inFlight;
  }

  /** True once it ended (or is ending): it takes nothing more. */
  get ended(): boolean {
    return this.#ending !== undefined;
  }

  /**
   * One message of the client (the body of a POST, read and classified).
   * A request gets its response as one JSON body or an SSE stream; any other
   * message gets 202 with no body. `headers` go on the response (the session
   * id of an initialize).
   */
  async post(inbound: Inbound, headers: Record<string, string> = {}): Promise<Response> {
    if (inbound.kind === "request" && this.#held) {
      // The back pressure of the client: a request waits while its streams are full, as the
      // stdio reader does; one more than the requests in flight may be is refused at once.
      // Its other messages make no output: they never wait (a cancellation gets through).
      if (this.#waiting >= this.#o.settings.limits.max_in_flight_requests) {
        const error = BridgeError.of("too_many_requests").toJSON();
        return json({ jsonrpc: "2.0", id: inbound.id, error }, 200, headers);
      }
      this.#waiting++;
      const held = this.#held;
      let wake!: () => void;
      await new Promise<void>((resolve) => {
        wake = resolve;
        this.#wakers.add(wake);
        held.then(wake, wake);
      });
      this.#wakers.delete(wake);
      this.#waiting--;
    }
    // serve stops: a request that waited for the client's streams is new work, never started,
    // and gets the answer of a request in flight at the end of the grace.
    if (inbound.kind === "request" && this.#refusing) {
      return json({ jsonrpc: "2.0", id: inbound.id, error: rpcErrorOf("stopping") }, 200, headers);
    }
    // Ended meanwhile (a DELETE, the idle limit): its front end answers nothing more.
    if (this.#ending) return httpError("session_not_found");
    this.#touch();
    if (inbound.kind === "reject") {
      const body = { jsonrpc: "2.0", id: inbound.id, error: inbound.error.toJSON() };
      return json(body, inbound.id === null ? 400 : 200, headers);
    }
    if (inbound.kind === "drop") {
      // A response that is not valid or answers no request of the server: the transport asks
      // for an error status when the server cannot accept a message (the front end logs it).
      this.#accept(inbound);
      return httpError("not_accepted", headers);
    }
    if (inbound.kind !== "request") {
      if (
        inbound.kind === "notification" && inbound.method === "notifications/initialized" &&
        this.#frontend.state !== "awaiting_initialize" && this.#frontend.state !== "initializing"
      ) {
        this.#initialized = true;
        clearTimeout(this.#init);
      }
      this.#accept(inbound);
      return new Response(null, { status: 202, headers });
    }
    const { id } = inbound;
    if (this.#channel.hasPost(id)) {
      // Its response would go to the stream of the other POST: this one gets the error now.
      const error = BridgeError.of(
        "invalid_request_shape",
        "the id belongs to a request in flight",
      );
      return json({ jsonrpc: "2.0", id, error: error.toJSON() }, 200, headers);
    }
    this.#channel.openPost(id);
    this.#accept(inbound);
    const reply = this.#channel.reply(id, () => this.#afterInitialize(inbound.method));
    if (reply.kind === "json") {
      // An initialize refused at once (its params) ended its session already: the answer
      // names none, so that its client never sends an id that gets 404.
      const refused = inbound.method === "initialize" && "error" in reply.message;
      return json(reply.message, 200, refused ? withoutSessionId(headers) : headers);
    }
    return new Response(reply.stream.body, {
      status: 200,
      headers: { ...headers, ...SSE_HEADERS },
    });
  }

  /** Gives the front end one message; its output's back pressure holds the next request. */
  #accept(inbound: Inbound): void {
    const held = this.#frontend.acceptInbound(inbound);
    this.#held = held;
    held?.then(() => {
      if (this.#held === held) this.#held = undefined;
    });
  }

  /**
   * The exchange of an initialize is over. One that failed ends its session
   * (the client starts a new one); one still in flight lost its client,
   * which went away before the answer and never learns the session's id:
   * the session ends at once (its start is canceled) instead of holding the
   * upstream until the idle limit. One that succeeded gives its client
   * {@linkcode INIT_TIMEOUT_MS} to send `notifications/initialized`, else
   * the session ends: sessions that only sent initialize would hold every
   * place of `--max-sessions` for the idle limit.
   */
  #afterInitialize(method: string): void {
    if (method !== "initialize") return;
    const state = this.#frontend.state;
    if (state !== "awaiting_initialize" && state !== "initializing") {
      if (this.#initialized || this.#ending) return;
      clearTimeout(this.#init);
      this.#init = setTimeout(() => {
        if (this.#initialized) return;
        this.#log.info("the session ends: its client did not complete its initialization in time");
        void this.end();
      }, this.#o.initTimeoutMs ?? INIT_TIMEOUT_MS);
    } else if (state === "awaiting_initialize") {
      this.#log.info("initialize failed: the session ends");
      void this.end();
    } else if (state === "initializing") {
      this.#log.info("the client went away before the answer of initialize: the session ends");
      void this.end();
    }
  }

  /** The GET stream of the session: the messages of no request. */
  get(): Response {
    this.#touch();
    return new Response(this.#channel.openGet().body, { status: 200, headers: SSE_HEADERS });
  }

  /**
   * Ends the session as the end of stdin ends a stdio bridge: the requests in
   * flight are canceled (they get no response), the listen stream and the
   * upstream link of the session close, then its streams.
   */
  end(): Promise<void> {
    this.#ending ??= (async () => {
      clearTimeout(this.#idle);
      clearTimeout(this.#init);
      await this.#frontend.shutdown();
      this.#o.onEnd(this);
    })();
    return this.#ending;
  }

  /**
   * `serve` stops (SIGTERM): the session takes no new request, and each
   * request that waits for the back pressure of its streams gets the error
   * `stopping` at once; the requests in flight go on for the grace.
   */
  refuseRequests(): void {
    if (this.#refusing) return;
    this.#refusing = true;
    if (this.#waiting > 0) {
      this.#log.info(
        `stopping: ${this.#waiting} request${
          this.#waiting === 1 ? "" : "s"
        } that waited for the client's streams get the error stopping`,
      );
    }
    for (const wake of this.#wakers) wake();
  }

  /**
   * The end of `serve` after its shutdown grace: each request still in
   * flight gets the error `stopping` (its client must not wait for an
   * answer that never comes), then the session ends as {@linkcode end}
   * does, which cancels those requests upstream.
   */
  stop(): Promise<void> {
    this.refuseRequests();
    if (!this.#ending) {
      const answered = this.#channel.answerEach(rpcErrorOf("stopping"));
      if (answered > 0) {
        this.#log.info(
          `the shutdown grace passed: ${answered} request${
            answered === 1 ? "" : "s"
          } in flight get the error stopping and are canceled`,
        );
      }
    }
    return this.end();
  }

  /**
   * Activity: the idle limit counts from now. When it passes with no stream
   * open and no request in flight, the session ends (its client has gone
   * without a DELETE); else it counts again.
   */
  #touch(): void {
    if (this.#ending) return;
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#channel.openStreams > 0 || this.#frontend.inFlight > 0) return this.#touch();
      this.#log.info("the session ends: its client sent nothing for the idle limit");
      void this.end();
    }, this.#o.idleMs);
  }
}

/** `headers` without `Mcp-Session-Id`. */
function withoutSessionId(headers: Record<string, string>): Record<string, string> {
  const { "mcp-session-id": _, ...rest } = headers;
  return rest;
}

/** A JSON body. */
function json(
  body: Message | Record<string, unknown>,
  status: number,
  headers: Record<string, string>,
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json" },
  });
}
