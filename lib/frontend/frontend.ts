/**
 * The front end: an MCP server of revision 2025-11-25 for one client, as a
 * state machine, behind its face (`channel.ts`: the stdio lines, or a
 * session of `serve` over HTTP). The state is one typed value (`state.ts`);
 * the spec's message table ({@linkcode REQUEST_TABLE},
 * {@linkcode NOTIFICATION_TABLE}) says
 * what each state does with each kind of message; what only the ready state
 * has (the upstream client, the input rounds, the result rules, the
 * listener) lives in that state.
 *
 * The reader never waits for a request: each frame is handled at once, and
 * each forwarded request runs on its own. Every request of the client gets
 * exactly one response, except a canceled request and the requests in flight
 * at the end of the input, which get none.
 *
 * @module
 */

import type { ByteInput } from "../jsonrpc/byte_io.ts";
import { type Frame, readFrames } from "../jsonrpc/framer.ts";
import {
  isObject,
  isRequestId,
  type Json,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { endWords, failureOfEnd } from "../upstream/link.ts";
import { BridgeError } from "../errors/errors.ts";
import { failureLine, mapUpstreamFailure } from "../errors/failures.ts";
import { type Flight, Flights } from "./flights.ts";
import { type Inbound, readClientFrame } from "./inbound.ts";
import { type ClientChannel, lineChannel } from "./channel.ts";
import type { FrontendOptions, FrontendSettings } from "./frontend_options.ts";
import { type LoggingLevel, setLevelParams } from "./client_log_level.ts";
import {
  NOTIFICATION_TABLE,
  notificationKind,
  REQUEST_TABLE,
  requestKind,
  type StateName,
} from "./message_table.ts";
import { CANCEL_REASONS, PendingTable } from "../input/pending.ts";
import { PromiseGroup } from "./promise_group.ts";
import type { Ready } from "./ready.ts";
import { connectionOf, isPassThrough, readyState, type State } from "./state.ts";
import type { PassThrough } from "../legacy/passthrough.ts";
import { initializeUpstream } from "./initialize_step.ts";
import { hasModernMeta, isInitializeParams } from "../translate/translate.ts";

/** The front end of one connection. */
export class Frontend {
  #options: FrontendSettings;
  #channel: ClientChannel;
  #state: State = { name: "awaiting_initialize" };
  #flights: Flights;
  #tasks = new PromiseGroup();
  #level: LoggingLevel | undefined;
  #upstreamStopped = false;
  #pending: PendingTable;
  #elicitations = 0;

  constructor(options: FrontendOptions) {
    this.#options = options;
    this.#channel = "channel" in options
      ? options.channel
      : lineChannel(options.output, options.log);
    this.#pending = new PendingTable(options.profile.request_id_prefix);
    this.#flights = new Flights(options.limits.max_in_flight_requests);
  }

  /** The name of the current state. */
  get state(): StateName {
    return this.#state.name;
  }

  /**
   * Reads the client until the end of its input (or an abort of `signal`,
   * which acts as the end of the input), then shuts down. Returns the exit
   * code: 0, or 1 when the upstream server stopped by itself.
   */
  async run(input: ByteInput, signal?: AbortSignal): Promise<number> {
    try {
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
    return this.exitCode;
  }

  /** The requests of the client in flight now (a face waits for them before it ends). */
  get inFlight(): number {
    return this.#flights.size;
  }

  /** 0, or 1 once the upstream server stopped by itself. */
  get exitCode(): number {
    return this.#upstreamStopped ? 1 : 0;
  }

  /**
   * Handles one frame of the client, as the reader of {@linkcode run} does;
   * the embedded bridge gives the first line it has read this way. Returns a
   * promise while the output waits for the client: the caller reads the next
   * frame after it settles. After the last frame, call {@linkcode shutdown}.
   */
  accept(frame: Frame): Promise<void> | undefined {
    const { limits, profile } = this.#options;
    return this.acceptInbound(readClientFrame(frame, limits, profile.request_id_prefix));
  }

  /**
   * Handles one message of the client that its face has already read
   * (`readClientFrame`), as {@linkcode accept} does: the HTTP face reads each
   * body once, to know whether it holds a request.
   */
  acceptInbound(inbound: Inbound): Promise<void> | undefined {
    this.#onInbound(inbound);
    return this.#channel.hold();
  }

  /** The back pressure of the output, for the reader of the upstream link. */
  #hold = (): Promise<void> | undefined => this.#channel.hold();

  #write = (message: Message, related?: RequestId): void => {
    this.#channel.send(message, related);
  };

  #reply(id: RequestId, result: Json): void {
    this.#write({ jsonrpc: "2.0", id, result }, id);
  }

  #fail(id: RequestId | null, error: BridgeError): void {
    this.#write({ jsonrpc: "2.0", id, error: error.toJSON() }, id ?? undefined);
  }

  /** A failed request of the client: its error, and its log line where the error asks for one. */
  #failed(id: RequestId, method: string, error: BridgeError): void {
    const line = failureLine(method, id, error);
    if (line !== undefined) this.#options.log.warn(line);
    this.#fail(id, error);
  }

  /**
   * Runs a task of the connection; shutdown waits for it. A task of a
   * request names its flight: when the task throws, the request still gets
   * its one response, -32603 with a fixed message (the stack goes to the log
   * only), unless it was canceled or answered. A request that ends without
   * its response (a cancellation) is over too: its face learns it.
   */
  #spawn(task: () => Promise<void>, flight?: Flight): void {
    this.#tasks.run(
      task,
      (error) => {
        this.#options.log.error(
          `internal error: ${
            error instanceof Error ? (error.stack ?? error.message) : String(error)
          }`,
        );
        if (flight && !flight.canceled && !flight.answered) {
          this.#answer(flight, BridgeError.internal());
        }
      },
      flight && (() => {
        if (!flight.answered) this.#channel.unanswered?.(flight.id);
      }),
    );
  }

  /** The one response of a flight; a failure has its line in the log (`#failed`). */
  #answer(flight: Flight, outcome: { result: Json } | BridgeError): void {
    flight.answered = true;
    if (outcome instanceof BridgeError) this.#failed(flight.id, flight.method, outcome);
    else this.#reply(flight.id, outcome.result);
  }

  #onInbound(inbound: Inbound): void {
    const { log } = this.#options;
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
    const state = this.#state;
    switch (NOTIFICATION_TABLE[notificationKind(method)][state.name]) {
      case "cancel": {
        const requestId = isObject(params) ? params.requestId : undefined;
        // Without a requestId it cancels nothing: the bridge declares no tasks.
        if (isRequestId(requestId)) this.#flights.cancel(requestId, CANCEL_REASONS.client);
        return;
      }
      case "initialized":
        if (state.name === "ready") state.ready.initialized();
        return;
      case "ignore":
        return;
      case "debug":
        this.#options.log.debug(`ignored the notification ${method}`);
        return;
      case "pass":
        if (state.name === "passthrough") state.ready.notify(method, params);
    }
  }

  #onRequest(id: RequestId, method: string, params: Json | undefined): void {
    const state = this.#state;
    switch (REQUEST_TABLE[requestKind(method)][state.name]) {
      case "pong":
        this.#reply(id, {});
        return;
      case "set_level": {
        const level = setLevelParams(params);
        if (level === undefined) return this.#fail(id, BridgeError.of("invalid_params"));
        this.#level = level;
        this.#reply(id, {});
        return;
      }
      case "method_not_found":
        this.#fail(id, BridgeError.of("method_not_found"));
        return;
      case "already_initialized":
        this.#fail(id, BridgeError.of("already_initialized"));
        return;
      case "initialize":
        this.#initialize(id, params);
        return;
      case "not_ready":
        this.#fail(
          id,
          BridgeError.of(hasModernMeta(params) ? "method_not_found" : "not_initialized"),
        );
        return;
      case "closing":
        // After the end of the input nothing more is answered; after the loss of the upstream:
        if (state.name === "closing" && state.lost) this.#failed(id, method, state.lost);
        return;
      case "forward":
        if (state.name === "ready") this.#forward(state.ready, id, method, params);
        return;
      case "pass":
        if (state.name === "passthrough") this.#forward(state.ready, id, method, params);
        return;
      case "subscription":
        if (state.name === "ready") this.#subscription(state.ready, id, method, params);
        return;
    }
  }

  #subscription(ready: Ready, id: RequestId, method: string, params: Json | undefined): void {
    ready.subscription(method, params, (outcome) => {
      // After the end of the input, a request gets no response.
      if (this.#state.name === "closing" && !this.#state.lost) return;
      if (outcome instanceof BridgeError) this.#failed(id, method, outcome);
      else this.#reply(id, outcome.result);
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

  /** The steps of the first initialize; a failure goes back to awaiting_initialize. */
  #initialize(id: RequestId, params: Json | undefined): void {
    if (!isInitializeParams(params)) {
      this.#fail(id, BridgeError.of("invalid_params"));
      return;
    }
    const flight = this.#track(id, "initialize");
    if (!flight) return;
    this.#state = { name: "initializing" };
    this.#spawn(async () => {
      const done = await initializeUpstream({
        ...this.#options,
        params,
        signal: flight.controller.signal,
        pending: this.#pending,
        write: this.#write,
        hold: this.#hold,
        nextElicitationId: () => `elicitation-${++this.#elicitations}`,
        logLevel: () => this.#level,
      });
      this.#flights.remove(flight);
      if (done.kind !== "ready") {
        // The failure path: the upstream stops, the state goes back, then the error.
        this.#spawn(() => done.stopped);
        if (this.#state.name === "initializing") this.#state = { name: "awaiting_initialize" };
        if (done.kind !== "failed" || flight.canceled) return;
        // The start logged the failure of initialize in its own words.
        flight.answered = true;
        return this.#fail(id, done.error);
      }
      const { ready } = done;
      if (this.#state.name !== "initializing") {
        // The input ended during discover: nothing more goes out.
        this.#spawn(() => ready.session.close());
        return;
      }
      // The state is ready before the result goes out: the next requests can come at once.
      this.#state = readyState(ready);
      this.#watchUpstream(ready);
      this.#answer(flight, { result: done.result });
    }, flight);
  }

  /**
   * The loss of the upstream: the state closing, each later request gets its
   * error. An upstream that can no longer take a request (a child that closed
   * its stdin) is lost for the later requests, while the requests it has
   * still get their answers; its end, later, gives its own error.
   */
  async #watchUpstream(ready: Ready | PassThrough): Promise<void> {
    const { session } = ready;
    const sendEnd = session.link.sendEnded;
    const sendEnded = sendEnd && await Promise.race([session.done.then(() => undefined), sendEnd]);
    if (sendEnded) {
      if (!this.#lose(ready, mapUpstreamFailure(sendEnded, "", ""))) return;
      const what = sendEnded.kind === "closed"
        ? "the upstream server closed its stdin"
        : "the stdin of the upstream server failed";
      this.#options.log.error(
        `${what}: each later request fails; the requests that it has wait for their answers`,
      );
    }
    const end = await session.done;
    if (!this.#lose(ready, mapUpstreamFailure(failureOfEnd(end), "", ""))) return;
    this.#options.log.error(endWords(end));
  }

  /** The state closing with the loss `lost`; false when the bridge itself closes. */
  #lose(ready: Ready | PassThrough, lost: BridgeError): boolean {
    const state = this.#state;
    if (state.name === "closing" && !state.lost) return false; // the end of the input
    this.#state = { name: "closing", ready, lost };
    this.#upstreamStopped = true;
    return true;
  }

  #forward(
    ready: Ready | PassThrough,
    id: RequestId,
    method: string,
    params: Json | undefined,
  ): void {
    // A hidden tool is refused here, on both paths: nothing of the call goes upstream.
    const refusal = method === "tools/call" ? this.#options.tools?.refusal(params) : undefined;
    if (refusal) {
      this.#options.log.info(`refused a tools/call: ${refusal.message}`);
      return this.#fail(id, refusal);
    }
    const flight = this.#track(id, method);
    if (!flight) return;
    this.#spawn(async () => {
      let outcome;
      try {
        outcome = await ready.forward(method, params, flight.controller.signal, id);
      } finally {
        this.#flights.remove(flight);
      }
      if (flight.canceled || outcome.kind === "canceled") return;
      this.#answer(flight, outcome.kind === "error" ? outcome.error : outcome);
    }, flight);
  }

  /**
   * The end of the input: cancels each request in flight (they get no
   * response), waits for the tasks for at most the shutdown grace, then
   * closes the upstream client and the output.
   */
  async shutdown(): Promise<void> {
    const previous = this.#state;
    const ready = connectionOf(previous);
    // After the end of the input, nothing more is answered, also after a loss of the upstream.
    this.#state = { name: "closing", ready, lost: undefined };
    this.#flights.cancelAll(CANCEL_REASONS.closed);
    if (ready && isPassThrough(ready)) ready.end(CANCEL_REASONS.closed);
    const listener = !ready || isPassThrough(ready) ? undefined : ready.listener?.close();
    await this.#tasks.settled(this.#options.limits.shutdown_grace_ms, listener);
    await ready?.session.close();
    await this.#tasks.settled(this.#options.limits.shutdown_grace_ms);
    // A client that stopped reading never takes the last bytes: the close has a deadline too.
    await this.#tasks.settled(this.#options.limits.shutdown_grace_ms, this.#channel.close());
  }
}
