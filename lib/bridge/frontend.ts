/**
 * The front end: a stdio MCP server of revision 2025-11-25 for the client,
 * with four states and a rule for each message of the client.
 *
 * The reader never waits for a request: each frame is handled at once, and
 * each forwarded request runs on its own. Every request of the client gets
 * exactly one response, except a canceled request and the requests in flight
 * at the end of the input, which get none.
 *
 * @module
 */

import { type Frame, readFrames } from "../jsonrpc/framer.ts";
import {
  isObject,
  isRequestId,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { MessageWriter } from "../jsonrpc/writer.ts";
import type { Connect } from "../upstream/link.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import { failureOfEnd } from "../upstream/failure.ts";
import { mapUpstreamFailure } from "./failures.ts";
import { BridgeError } from "./errors.ts";
import { startUpstream } from "./start.ts";
import { declaredOf } from "./input_checks.ts";
import { type RoundEnv, runRounds } from "./input.ts";
import { CANCEL_REASONS, PendingTable } from "./pending.ts";
import { urlPrompt } from "./url_prompt.ts";
import { type Flight, Flights } from "./flights.ts";
import { type ListenDeclared, listenDeclared, Listener } from "./notify.ts";
import { readClientFrame } from "./inbound.ts";
import type { Limits } from "./limits.ts";
import type { Logger } from "./log.ts";
import { passthroughMeta } from "./meta.ts";
import type { Profile } from "./profile.ts";
import { ProgressRelay } from "./progress.ts";
import { applyResultRules, type ResultContext } from "./results.ts";
import {
  type Fallback,
  FORWARDED_METHODS,
  forwardParams,
  hasModernMeta,
  initializeResult,
  isInitializeParams,
  type LoggingLevel,
  logMessageFor,
  progressToken,
  setLevelParams,
} from "./translate.ts";

/** The states of the front end. */
export type State = "awaiting_initialize" | "initializing" | "ready" | "closing";

/** Options of a {@linkcode Frontend}. */
export interface FrontendOptions {
  readonly profile: Profile;
  readonly limits: Limits;
  readonly log: Logger;
  /** serverInfo when the upstream server gives none. */
  readonly fallback: Fallback;
  /** Makes the upstream link; a rejection is spawn_failed or connect_failed. */
  readonly connect: Connect;
  /** Where the messages for the client go. */
  readonly output: WritableStream<Uint8Array>;
}

/** The front end of one connection. */
export class Frontend {
  #options: FrontendOptions;
  #writer: MessageWriter;
  #state: State = "awaiting_initialize";
  /** The error of each later request after the loss of the upstream; none after the end of the input. */
  #closingError: BridgeError | undefined;
  #session: UpstreamClient | undefined;
  #flights: Flights;
  #tasks = new Set<Promise<void>>();
  #level: LoggingLevel | undefined;
  #upstreamStopped = false;
  #resultContext: ResultContext | undefined;
  #pending: PendingTable;
  /** What the input rounds of every forwarded request share; set in ready. */
  #rounds: RoundEnv | undefined;
  #elicitations = 0;
  #listener: Listener | undefined;
  #listen: ListenDeclared = { lists: new Set(), subscribe: false };

  constructor(options: FrontendOptions) {
    this.#options = options;
    this.#writer = new MessageWriter(options.output);
    this.#pending = new PendingTable(options.profile.request_id_prefix);
    this.#flights = new Flights(options.limits.max_in_flight_requests);
  }

  /** The current state. */
  get state(): State {
    return this.#state;
  }

  /**
   * Reads the client until the end of its input (or an abort of `signal`,
   * which acts as the end of the input), then shuts down. Returns the exit
   * code: 0, or 1 when the upstream server stopped by itself.
   */
  async run(input: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<number> {
    try {
      // The reader never waits for a request: each frame is handled at once.
      await readFrames(
        input,
        { maxLineBytes: this.#options.limits.max_line_bytes },
        (frame) => this.accept(frame),
        signal,
      );
    } catch (error) {
      this.#options.log.error(`the input failed: ${error instanceof Error ? error.name : "error"}`);
    }
    await this.shutdown();
    return this.#upstreamStopped ? 1 : 0;
  }

  #write(message: Message): void {
    this.#writer.write(message);
  }

  #reply(id: RequestId, result: Json): void {
    this.#write({ jsonrpc: "2.0", id, result });
  }

  #fail(id: RequestId | null, error: BridgeError): void {
    this.#write({ jsonrpc: "2.0", id, error: error.toJSON() });
  }

  /**
   * Runs a task of the connection; shutdown waits for it. A task of a
   * request names its flight: when the task throws, the request still gets
   * its one response, -32603 with a fixed message (the stack goes to the log
   * only), unless it was canceled.
   */
  #spawn(task: () => Promise<void>, flight?: Flight): void {
    const promise = task().catch((error) => {
      this.#options.log.error(
        `internal error: ${
          error instanceof Error ? (error.stack ?? error.message) : String(error)
        }`,
      );
      if (flight && !flight.canceled && !flight.answered) {
        flight.answered = true;
        this.#fail(flight.id, BridgeError.internal());
      }
    }).finally(() => this.#tasks.delete(promise));
    this.#tasks.add(promise);
  }

  /**
   * Handles one frame of the client, as the reader of {@linkcode run} does;
   * the embedded bridge gives the first line it has read this way. Returns a
   * promise while the output waits for the client: the caller reads the next
   * frame after it settles. After the last frame, call {@linkcode shutdown}.
   */
  accept(frame: Frame): Promise<void> | undefined {
    this.#onFrame(frame);
    return this.#writer.hold();
  }

  /** The back pressure of the output, for the readers of the upstream link. */
  #hold = (): Promise<void> | undefined => this.#writer.hold();

  #onFrame(frame: Frame): void {
    const { limits, profile, log } = this.#options;
    const inbound = readClientFrame(frame, limits, profile.request_id_prefix);
    switch (inbound.kind) {
      case "request":
        this.#onRequest(inbound.id, inbound.method, inbound.params);
        return;
      case "notification":
        this.#onNotification(inbound.method, inbound.params);
        return;
      case "answer":
        // The pending table drops an answer whose id is unknown or already settled.
        if (!this.#pending.settle(inbound.id, inbound.answer)) {
          log.debug(`dropped an answer for the unknown id ${inbound.id}`);
        }
        return;
      case "reject":
        this.#fail(inbound.id, inbound.error);
        return;
      case "drop":
        log.debug(`dropped ${inbound.why}`);
    }
  }

  #onNotification(method: string, params: Json | undefined): void {
    switch (method) {
      case "notifications/cancelled": {
        const requestId = isObject(params) ? params.requestId : undefined;
        if (!isRequestId(requestId)) return; // no requestId: the bridge declares no tasks
        this.#flights.cancel(requestId, CANCEL_REASONS.client);
        return;
      }
      case "notifications/initialized":
        if (this.#state === "ready") {
          this.#startListener();
          // A later sign-in can ask the client to open its URL from now on.
          if (this.#rounds?.declared.url) {
            this.#session?.link.setUrlPrompt?.(urlPrompt(this.#rounds));
          }
        }
        return;
      case "notifications/roots/list_changed":
        return;
      default:
        this.#options.log.debug(`ignored the notification ${method}`);
    }
  }

  #onRequest(id: RequestId, method: string, params: Json | undefined): void {
    switch (method) {
      case "ping":
        this.#reply(id, {});
        return;
      case "logging/setLevel": {
        const level = setLevelParams(params);
        if (level === undefined) {
          this.#fail(id, BridgeError.of("invalid_params"));
          return;
        }
        this.#level = level;
        this.#reply(id, {});
        return;
      }
      case "server/discover":
        this.#fail(id, BridgeError.of("method_not_found"));
        return;
    }
    if (this.#state === "closing") {
      // After the end of the input nothing more is read; after the loss of the upstream:
      if (this.#closingError) this.#fail(id, this.#closingError);
      return;
    }
    if (method === "initialize") {
      if (this.#state !== "awaiting_initialize") {
        this.#fail(id, BridgeError.of("already_initialized"));
        return;
      }
      this.#initialize(id, params);
      return;
    }
    if (this.#state !== "ready") {
      this.#fail(
        id,
        BridgeError.of(hasModernMeta(params) ? "method_not_found" : "not_initialized"),
      );
      return;
    }
    if (method === "resources/subscribe" || method === "resources/unsubscribe") {
      this.#subscription(id, method === "resources/subscribe", params);
      return;
    }
    if (!FORWARDED_METHODS.has(method)) {
      this.#fail(id, BridgeError.of("method_not_found"));
      return;
    }
    this.#forward(id, method, params);
  }

  /** Opens the listen stream one time, when the initialize result declares a list change or subscribe. */
  #startListener(): void {
    const { lists, subscribe } = this.#listen;
    if (this.#listener || !this.#session || (lists.size === 0 && !subscribe)) return;
    this.#listener = new Listener({
      session: this.#session,
      limits: this.#options.limits,
      log: this.#options.log,
      lists,
      write: (message) => this.#write(message),
      logLevel: () => this.#level,
    });
    this.#listener.start();
  }

  #subscription(id: RequestId, add: boolean, params: Json | undefined): void {
    const listener = this.#listener;
    if (!this.#listen.subscribe || !listener) {
      this.#fail(id, BridgeError.of("method_not_found"));
      return;
    }
    if (!isObject(params) || typeof params.uri !== "string") {
      this.#fail(id, BridgeError.of("invalid_params"));
      return;
    }
    listener.change(params.uri, add, (outcome) => {
      // After the end of the input, a request gets no response.
      if (this.#state === "closing" && !this.#closingError) return;
      if ("result" in outcome) this.#reply(id, outcome.result);
      else this.#fail(id, outcome.error);
    });
  }

  /** Adds a flight, or answers at once above the limit. */
  #track(id: RequestId, method: string): Flight | undefined {
    const flight = this.#flights.add(id, method);
    if (flight instanceof BridgeError) {
      this.#fail(id, flight);
      return undefined;
    }
    return flight;
  }

  #initialize(id: RequestId, params: Json | undefined): void {
    this.#state = "initializing";
    if (!isInitializeParams(params)) {
      this.#state = "awaiting_initialize";
      this.#fail(id, BridgeError.of("invalid_params"));
      return;
    }
    const flight = this.#track(id, "initialize");
    if (!flight) {
      this.#state = "awaiting_initialize";
      return;
    }
    const { log, limits, profile, fallback } = this.#options;
    this.#spawn(async () => {
      const started = await startUpstream({
        connect: this.#options.connect,
        clientInfo: params.clientInfo as JsonObject,
        capabilities: params.capabilities as JsonObject,
        discoverTimeoutMs: limits.discover_timeout_ms,
        signal: flight.controller.signal,
        log,
        onLogMessage: (message) => this.#onUpstreamLog(message),
        hold: this.#hold,
      });
      this.#flights.remove(flight);
      if (started.kind !== "ready") {
        // The failure path: the upstream stops, the state goes back, then the error.
        this.#spawn(() => started.stopped);
        this.#state = "awaiting_initialize";
        if (started.kind === "failed" && !flight.canceled) {
          flight.answered = true;
          this.#fail(id, started.error);
        }
        return;
      }
      const { session, discover } = started;
      const icons = session.link.isRemote ? "data_only" : "all";
      this.#listen = listenDeclared(discover.capabilities);
      this.#session = session;
      this.#rounds = {
        session,
        limits,
        log,
        declared: declaredOf(params.capabilities),
        pending: this.#pending,
        write: (message) => this.#write(message),
        nextElicitationId: () => `elicitation-${++this.#elicitations}`,
        logLevel: () => this.#level,
      };
      this.#resultContext = { quirks: profile.quirks, icons, log };
      // The state is ready before the result goes out: the next requests can come at once.
      this.#state = "ready";
      // Not a task of the shutdown: it ends with the upstream.
      this.#watchUpstream(session);
      flight.answered = true;
      this.#reply(id, initializeResult(profile, discover, fallback, icons));
    }, flight);
  }

  async #watchUpstream(session: UpstreamClient): Promise<void> {
    const end = await session.done;
    if (this.#state === "closing") return; // the bridge closed it
    this.#state = "closing";
    this.#closingError = mapUpstreamFailure(failureOfEnd(end), "", "");
    this.#upstreamStopped = true;
    this.#options.log.error(
      end.kind === "exited"
        ? `the upstream server process stopped with the code ${end.code}`
        : "the upstream connection closed",
    );
  }

  #onUpstreamLog(params: JsonObject): void {
    const message = logMessageFor(params, this.#level);
    if (message) this.#write({ jsonrpc: "2.0", method: "notifications/message", params: message });
  }

  #forward(id: RequestId, method: string, rawParams: Json | undefined): void {
    const rounds = this.#rounds;
    const flight = this.#track(id, method);
    if (!flight || !rounds) return;
    const { limits, profile } = this.#options;
    const { params, meta } = forwardParams(rawParams);
    const token = progressToken(meta);
    const relay = token === undefined
      ? undefined
      : new ProgressRelay(token, limits.max_progress_per_second, (n) => this.#write(n));
    const passMeta = passthroughMeta(meta, profile.meta_passthrough);
    this.#spawn(async () => {
      let outcome;
      try {
        outcome = await runRounds(rounds, method, params, {
          signal: flight.controller.signal,
          ...(relay && { onProgress: (p) => relay.relay(p) }),
          ...(passMeta && { meta: passMeta }),
        });
      } finally {
        // No progress after the response or a cancellation.
        relay?.stop();
        this.#flights.remove(flight);
      }
      if (flight.canceled || outcome.kind === "canceled") return;
      if (outcome.kind === "error") {
        flight.answered = true;
        this.#fail(id, outcome.error);
        return;
      }
      const result = applyResultRules(method, outcome.result, this.#resultContext!);
      flight.answered = true;
      this.#reply(id, result);
    }, flight);
  }

  /**
   * The end of the input: cancels each request in flight (they get no
   * response), waits for the tasks for at most the shutdown grace, then
   * closes the upstream client and the output.
   */
  async shutdown(): Promise<void> {
    this.#state = "closing";
    this.#flights.cancelAll(CANCEL_REASONS.closed);
    const listener = this.#listener?.close();
    await this.#waitForTasks(this.#options.limits.shutdown_grace_ms, listener);
    await this.#session?.close();
    await this.#waitForTasks(this.#options.limits.shutdown_grace_ms);
    await this.#writer.close();
  }

  async #waitForTasks(ms: number, also?: Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
    await Promise.race([Promise.allSettled([...this.#tasks, also]), grace]);
    clearTimeout(timer);
  }
}
