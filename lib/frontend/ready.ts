/**
 * What only the ready state of the front end has: the upstream client, the
 * shared context of the input rounds, the result rules with the icon rule of
 * the link, the declared lists and the listener. A forwarded request runs
 * here, from the params of the client to the result with its rules applied.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import { isObject, type Json, type JsonObject, type RequestId } from "../jsonrpc/message.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import { BridgeError } from "../errors/errors.ts";
import { type Outcome, type RoundEnv, runRounds } from "../input/rounds.ts";
import { passthroughMeta } from "./meta.ts";
import { type ListenDeclared, listenDeclared, Listener } from "../listen/listen_stream.ts";
import type { Profile } from "../settings/profile.ts";
import { ProgressRelay } from "../translate/progress.ts";
import { applyResultRules, type ResultContext } from "../translate/results.ts";
import { signInPrompt } from "../input/sign_in_prompt.ts";
import { logNotificationFor } from "./client_log_level.ts";
import { forwardParams, type IconRule, progressToken } from "../translate/translate.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/** What the ready state is made from: what the input rounds need, and the rest. */
export interface ReadyOptions extends RoundEnv {
  readonly discover: JsonObject;
  readonly profile: Profile;
  /** The clock of the listen stream; the real one by default. */
  readonly clock?: Clock | undefined;
  /** `--tool` and `--ignore-tool`: the tools that tools/list leaves out. */
  readonly tools?: ToolFilter | undefined;
}

/** The ready data, as the front end sees it. */
export interface Ready {
  readonly session: UpstreamClient;
  readonly icons: IconRule;
  readonly rounds: RoundEnv;
  readonly listen: ListenDeclared;
  /** The listener, once notifications/initialized opened it. */
  readonly listener: Listener | undefined;
  /**
   * notifications/initialized: opens the listen stream one time, when the
   * initialize result declares a list change or subscribe, and lets a later
   * sign-in ask the client with a URL elicitation when it declared
   * elicitation.url.
   */
  initialized(): void;
  /** resources/subscribe (`add`) or resources/unsubscribe: a change of the listen stream. */
  subscription(
    method: string,
    params: Json | undefined,
    respond: (outcome: { result: Json } | BridgeError) => void,
  ): void;
  /**
   * Runs one forwarded request: its rounds, progress, `_meta` passthrough and
   * result rules. `id` is the client's id of the request: what the request
   * sends the client (progress, input requests, log messages of its own
   * exchange) belongs to it.
   */
  forward(
    method: string,
    params: Json | undefined,
    signal: AbortSignal,
    id?: RequestId,
  ): Promise<Outcome>;
}

/** The ready state of one connection. */
export class ReadySession implements Ready {
  readonly session: UpstreamClient;
  readonly icons: IconRule;
  readonly rounds: RoundEnv;
  readonly listen: ListenDeclared;
  #listener: Listener | undefined;
  readonly #results: ResultContext;
  readonly #options: ReadyOptions;

  constructor(options: ReadyOptions) {
    const { session, log, profile } = options;
    this.#options = options;
    this.session = session;
    this.icons = session.link.isRemote ? "data_only" : "all";
    this.listen = listenDeclared(options.discover.capabilities);
    this.rounds = options;
    this.#results = { quirks: profile.quirks, icons: this.icons, log, tools: options.tools };
  }

  get listener(): Listener | undefined {
    return this.#listener;
  }

  initialized(): void {
    const { lists, subscribe } = this.listen;
    const { limits, log, write, logLevel, pending, nextElicitationId, clock } = this.#options;
    if (!this.#listener && (lists.size > 0 || subscribe)) {
      this.#listener = new Listener({
        session: this.session,
        limits,
        log,
        lists,
        write,
        logLevel,
        clock,
      });
      this.#listener.start();
    }
    const link = this.session.link;
    if (!link.setUrlPrompt || !this.rounds.declared.url) return;
    const prompt = signInPrompt(
      { pending, write, nextElicitationId, answerTimeoutMs: limits.input_answer_timeout_ms },
      () => link.nextSignIn?.() ?? Promise.resolve(),
    );
    link.setUrlPrompt(prompt);
  }

  subscription(
    method: string,
    params: Json | undefined,
    respond: (outcome: { result: Json } | BridgeError) => void,
  ): void {
    const listener = this.#listener;
    if (!this.listen.subscribe || !listener) return respond(BridgeError.of("method_not_found"));
    if (!isObject(params) || typeof params.uri !== "string") {
      return respond(BridgeError.of("invalid_params"));
    }
    listener.change(params.uri, method === "resources/subscribe", (outcome) => {
      respond("result" in outcome ? { result: outcome.result } : outcome.error);
    });
  }

  async forward(
    method: string,
    rawParams: Json | undefined,
    signal: AbortSignal,
    id?: RequestId,
  ): Promise<Outcome> {
    const { limits, profile, write, logLevel } = this.#options;
    const { params, meta } = forwardParams(rawParams);
    const token = progressToken(meta);
    const relay = token === undefined
      ? undefined
      : new ProgressRelay(token, limits.max_progress_per_second, (m) => write(m, id));
    const passMeta = passthroughMeta(meta, profile.meta_passthrough);
    let outcome: Outcome;
    try {
      outcome = await runRounds(this.rounds, method, params, {
        signal,
        related: id,
        ...(relay && { onProgress: (p) => relay.relay(p) }),
        ...(passMeta && { meta: passMeta }),
        onLog: (params) => {
          const out = logNotificationFor(params, logLevel());
          if (out) write(out, id);
        },
      });
    } finally {
      // No progress after the response or a cancellation.
      relay?.stop();
    }
    if (outcome.kind !== "result") return outcome;
    return { kind: "result", result: applyResultRules(method, outcome.result, this.#results) };
  }
}
