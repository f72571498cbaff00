/**
 * Input rounds (M2): a server of revision 2026-07-28 asks for input with an
 * InputRequiredResult; the bridge turns its input requests into requests to
 * the client of revision 2025-11-25, collects the answers, and sends the
 * upstream request again with `inputResponses` and the `requestState`.
 *
 * This module is the loop of rounds and the wait for the client's answers;
 * the checks of a round are in round_checks.ts and input_checks.ts, the
 * questions and the answer table in questions.ts.
 *
 * @module
 */

import { isObject, type Json, type JsonObject, type RequestId } from "../jsonrpc/message.ts";
import type { SendToClient } from "../frontend/channel.ts";
import type { LoggingLevel } from "../frontend/client_log_level.ts";
import type { UpstreamClient, UpstreamRequestOptions } from "../upstream/client.ts";
import { CODES } from "../errors/error_table.ts";
import { BridgeError } from "../errors/errors.ts";
import { mapUpstreamFailure } from "../errors/failures.ts";
import { type Declared, loadFormChecks } from "./input_checks.ts";
import { formatLimit, type Limits, roundTimeoutMs } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import { type Answer, CANCEL_REASONS, type PendingTable } from "./pending.ts";
import { type Outgoing, planQuestions, responsesOf, type UrlStep } from "./questions.ts";
import { checkRound, type RoundResult } from "./round_checks.ts";

/** What the rounds need from the connection. */
export interface RoundEnv {
  readonly session: UpstreamClient;
  readonly limits: Limits;
  readonly log: Logger;
  readonly declared: Declared;
  readonly pending: PendingTable;
  /** Writes a message for the client (with the id of its request, when it has one). */
  readonly write: SendToClient;
  /** A new elicitation id, unique on the connection. */
  readonly nextElicitationId: () => string;
  /** The log level of the client now: a change applies from the next round. */
  readonly logLevel: () => LoggingLevel | undefined;
}

/**
 * How a forwarded request ended.
 *
 * @example
 * ```ts
 * import type { Outcome } from "./rounds.ts";
 * import { BridgeError } from "../errors/errors.ts";
 * // What the client gets for each outcome of a forwarded request.
 * function response(id: number, outcome: Outcome): object | undefined {
 *   if (outcome.kind === "result") return { jsonrpc: "2.0", id, result: outcome.result };
 *   if (outcome.kind === "error") return { jsonrpc: "2.0", id, error: outcome.error.toJSON() };
 *   return undefined; // a canceled request gets no response
 * }
 * const timeout = BridgeError.of("timeout", "method: tools/call, limit: 3600 s");
 * const out = response(1, { kind: "error", error: timeout }) as { error: { code: number } };
 * if (out.error.code !== -32603) throw new Error();
 * if (response(2, { kind: "canceled" }) !== undefined) throw new Error();
 * ```
 */
export type Outcome =
  | { readonly kind: "result"; readonly result: Json }
  | { readonly kind: "error"; readonly error: BridgeError }
  | { readonly kind: "canceled" };

/** The text of the request-state rule. */
export function requestStateText(method: string, upstreamMessage: string): string {
  return "The upstream server did not accept the saved state of the request. " +
    "The answer possibly came after the time limit of the state, or the server started again. " +
    `Upstream message: ${upstreamMessage}. ` +
    (method === "tools/call" ? "Run the tool again." : "Send the request again.");
}

/**
 * The options of the upstream requests of the rounds; `signal` is the
 * flight's, `related` the id of the client's request (its questions, their
 * cancellations and `elicitation/complete` belong to it).
 */
export type RoundOptions = Omit<UpstreamRequestOptions, "timeoutMs" | "logLevel"> & {
  readonly signal: AbortSignal;
  readonly related?: RequestId | undefined;
};

/** How one round of questions ended: the inputResponses, the failure, or a cancel. */
type Asked = RoundResult<JsonObject> | { readonly ok: "canceled" };

/**
 * Runs one forwarded request through all its rounds. `signal` is the flight's
 * signal: its reason is the reason of each cancel.
 */
export async function runRounds(
  env: RoundEnv,
  method: string,
  baseParams: JsonObject,
  options: RoundOptions,
): Promise<Outcome> {
  const accepted = new Map<string, UrlStep>(); // URL → its step
  const completeSteps = (stillAsked: ReadonlySet<string>) => {
    for (const [url, step] of accepted) {
      if (stillAsked.has(url)) continue;
      accepted.delete(url);
      env.write({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId: step.elicitationId },
      }, options.related);
    }
  };
  try {
    return await loop(env, method, baseParams, options, accepted, completeSteps);
  } catch (error) {
    // Not a way of the rounds to end, a defect: the steps end all the same (the caller answers).
    completeSteps(new Set());
    if (options.signal.aborted) return { kind: "canceled" };
    throw error;
  }
}

/** The rounds; `accepted` holds the URL steps that the user accepted. */
async function loop(
  env: RoundEnv,
  method: string,
  baseParams: JsonObject,
  options: RoundOptions,
  accepted: Map<string, UrlStep>,
  completeSteps: (stillAsked: ReadonlySet<string>) => void,
): Promise<Outcome> {
  const { session, limits, log } = env;
  // The upstream request takes the rest: the id of the client's request stays here.
  const { related: _related, ...requestOptions } = options;
  let extra: JsonObject = {};
  let waitedMs = 0;
  for (let round = 1;; round++) {
    const timeoutMs = roundTimeoutMs(limits, method, round);
    let raw: Json;
    try {
      const logLevel = env.logLevel();
      raw = await session.request(method, { ...baseParams, ...extra }, {
        ...requestOptions,
        timeoutMs,
        ...(logLevel !== undefined && { logLevel }),
      });
    } catch (failure) {
      completeSteps(new Set());
      if (options.signal.aborted) return { kind: "canceled" };
      const error = mapUpstreamFailure(failure, method, formatLimit(timeoutMs));
      // Only an error of the upstream server keeps its code -32602 (failures.ts).
      if (error.code === CODES.INVALID_PARAMS && typeof extra.requestState === "string") {
        return requestStateRule(method, error, waitedMs, log);
      }
      return { kind: "error", error };
    }
    if (!isObject(raw) || raw.resultType !== "input_required") {
      completeSteps(new Set());
      return { kind: "result", result: raw };
    }
    const checked = checkRound(raw, round, limits);
    if (!checked.ok) {
      completeSteps(new Set());
      return { kind: "error", error: checked.error };
    }
    // The steps that this result no longer asks for are complete.
    completeSteps(checked.value.urls);
    const started = Date.now();
    const asked = await askRound(env, checked.value.requests, accepted, options);
    waitedMs = Date.now() - started;
    if (asked.ok !== true) {
      completeSteps(new Set());
      return asked.ok === "canceled" ? { kind: "canceled" } : { kind: "error", error: asked.error };
    }
    extra = { inputResponses: asked.value };
    if (checked.value.requestState !== undefined) extra.requestState = checked.value.requestState;
  }
}

function requestStateRule(
  method: string,
  error: BridgeError,
  waitedMs: number,
  log: Logger,
): Outcome {
  log.warn(
    `the upstream server did not accept the saved state of a ${method} request after a wait of ${
      formatLimit(waitedMs)
    } for the answers`,
  );
  const text = requestStateText(method, error.message);
  if (method === "tools/call") {
    return { kind: "result", result: { content: [{ type: "text", text }], isError: true } };
  }
  return { kind: "error", error: BridgeError.custom(error.code, text, error.data) };
}

/** Checks every input request of a round, asks the client, and builds `inputResponses`. */
async function askRound(
  env: RoundEnv,
  requests: JsonObject,
  accepted: Map<string, UrlStep>,
  options: RoundOptions,
): Promise<Asked> {
  await loadFormChecks();
  const plan = planQuestions(requests, {
    declared: env.declared,
    accepted,
    nextElicitationId: env.nextElicitationId,
    onRefusedUrl: (key) =>
      env.log.warn(
        `refused the URL of the input request '${key}': it is not https, or http on a loopback host`,
      ),
  });
  if (!plan.ok) return plan;
  if (plan.value.questions.length === 0) return { ok: true, value: plan.value.responses };
  const answers = await askClient(env, plan.value.questions, options);
  if (answers.ok !== true) return answers;
  return responsesOf(plan.value, answers.value, accepted);
}

/**
 * Sends all questions at one time and waits for all answers, at most the
 * answer limit; a cancel, the limit or the stop of the upstream server
 * cancels the questions without an answer.
 */
async function askClient(
  env: RoundEnv,
  questions: readonly Outgoing[],
  { signal, related }: RoundOptions,
): Promise<RoundResult<Answer[]> | { readonly ok: "canceled" }> {
  // Every entry goes in before its question goes out.
  const entries = questions.map(({ method, params }) => {
    const entry = env.pending.open();
    env.write({ jsonrpc: "2.0", id: entry.id, method, params }, related);
    return entry;
  });
  const cancelQuestions = (reason: string) => {
    for (const id of env.pending.remove(entries.map((entry) => entry.id))) {
      env.write({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason },
      }, related);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<"timeout" | "aborted" | "upstream">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), env.limits.input_answer_timeout_ms);
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    env.session.done.then(() => resolve("upstream"));
  });
  const first = await Promise.race([Promise.all(entries.map((entry) => entry.answer)), stop]);
  clearTimeout(timer);
  signal.removeEventListener("abort", onAbort!);
  switch (first) {
    case "timeout":
      cancelQuestions(CANCEL_REASONS.timeout);
      return { ok: false, error: BridgeError.of("input_timeout") };
    case "aborted":
      cancelQuestions(String(signal.reason ?? CANCEL_REASONS.client));
      return { ok: "canceled" };
    case "upstream":
      cancelQuestions(CANCEL_REASONS.upstream);
      return { ok: false, error: BridgeError.of("upstream_exited") };
    default:
      return { ok: true, value: first };
  }
}
