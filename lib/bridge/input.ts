/**
 * Input rounds (M2): a server of revision 2026-07-28 asks for input with an
 * InputRequiredResult; the bridge turns its input requests into requests to
 * the client of revision 2025-11-25, collects the answers, and sends the
 * upstream request again with `inputResponses` and the `requestState`.
 *
 * @module
 */

import { isObject, type Json, type JsonObject, type Message } from "../jsonrpc/message.ts";
import type { UpstreamClient, UpstreamRequestOptions } from "../upstream/client.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { BridgeError } from "./errors.ts";
import { mapUpstreamFailure } from "./failures.ts";
import {
  checkInputRequest,
  type Declared,
  isElicitResult,
  isRootsResult,
  isSamplingResult,
} from "./input_checks.ts";
import { formatLimit, type Limits, roundTimeoutMs } from "./limits.ts";
import type { Logger } from "./log.ts";
import { type Answer, CANCEL_REASONS, type PendingTable } from "./pending.ts";
import { isAllowedUrl } from "./url_rule.ts";

/** The message of the Continue form after a URL that the user accepted. */
export const CONTINUE_MESSAGE = "Complete the step in the web browser. Then select Continue.";

/** The form with one required choice, for VS Code, which cannot show a form without a property. */
export function continueForm(message: string): JsonObject {
  return {
    mode: "form",
    message,
    requestedSchema: {
      type: "object",
      properties: {
        continue: { type: "string", title: "Continue", enum: ["Continue"], default: "Continue" },
      },
      required: ["continue"],
    },
  };
}

/** What the rounds need from the connection. */
export interface RoundEnv {
  readonly session: UpstreamClient;
  readonly limits: Limits;
  readonly log: Logger;
  readonly declared: Declared;
  readonly pending: PendingTable;
  /** Writes a message for the client. */
  readonly write: (message: Message) => void;
  /** A new elicitation id, unique on the connection. */
  readonly nextElicitationId: () => string;
  /** The log level of the client now: a change applies from the next round. */
  readonly logLevel: () => string | undefined;
}

/** How a forwarded request ended. */
export type Outcome =
  | { readonly kind: "result"; readonly result: Json }
  | { readonly kind: "error"; readonly error: BridgeError }
  | { readonly kind: "canceled" };

/** A URL step that the user accepted and that is not complete. */
interface UrlStep {
  readonly elicitationId: string;
}

/** One question of a round, and how its answer becomes an input response. */
interface Question {
  readonly key: string;
  readonly kind: "form" | "url" | "sampling" | "roots" | "continue_form" | "continue_url";
  readonly validate?: ((value: Json) => boolean) | undefined;
  readonly url?: string;
  readonly elicitationId?: string;
}

class RoundFailure extends Error {
  constructor(readonly error: BridgeError) {
    super(error.message);
  }
}

function inputFailure(
  key: string,
  cause: "invalid_input_request" | "undeclared_input_request",
  text: string,
) {
  return new RoundFailure(BridgeError.of(cause, `input request '${key}': ${text}`));
}

/** The text of the request-state rule. */
export function requestStateText(method: string, upstreamMessage: string): string {
  return "The upstream server did not accept the saved state of the request. " +
    "The answer possibly came after the time limit of the state, or the server started again. " +
    `Upstream message: ${upstreamMessage}. ` +
    (method === "tools/call" ? "Run the tool again." : "Send the request again.");
}

/**
 * Runs one forwarded request through all its rounds. `signal` is the flight's
 * signal: its reason is the reason of each cancel.
 */
export async function runRounds(
  env: RoundEnv,
  method: string,
  baseParams: JsonObject,
  options: Omit<UpstreamRequestOptions, "timeoutMs" | "logLevel"> & {
    readonly signal: AbortSignal;
  },
): Promise<Outcome> {
  const { session, limits, log } = env;
  const accepted = new Map<string, UrlStep>(); // URL → its step
  let extra: JsonObject = {};
  let waitedMs = 0;
  const completeSteps = (stillAsked: ReadonlySet<string>) => {
    for (const [url, step] of accepted) {
      if (stillAsked.has(url)) continue;
      accepted.delete(url);
      env.write({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId: step.elicitationId },
      });
    }
  };
  for (let round = 1;; round++) {
    const timeoutMs = roundTimeoutMs(limits, method, round);
    let raw: Json;
    try {
      const logLevel = env.logLevel();
      raw = await session.request(method, { ...baseParams, ...extra }, {
        ...options,
        timeoutMs,
        ...(logLevel !== undefined && { logLevel }),
      });
    } catch (error) {
      completeSteps(new Set());
      if (options.signal.aborted) return { kind: "canceled" };
      if (
        error instanceof UpstreamFailure && error.kind === "rpc" && error.error?.code === -32602 &&
        typeof extra.requestState === "string"
      ) {
        return requestStateRule(method, error.error, waitedMs, log);
      }
      return { kind: "error", error: mapUpstreamFailure(error, method, formatLimit(timeoutMs)) };
    }
    if (!isObject(raw) || raw.resultType !== "input_required") {
      completeSteps(new Set());
      return { kind: "result", result: raw };
    }
    try {
      if (round >= limits.mrtr_max_rounds_client) {
        throw new RoundFailure(BridgeError.of("too_many_rounds"));
      }
      const requests = raw.inputRequests ?? {};
      if (!isObject(requests)) {
        throw new RoundFailure(
          BridgeError.of("invalid_input_request", "the inputRequests member is not an object"),
        );
      }
      if (raw.requestState !== undefined && typeof raw.requestState !== "string") {
        throw new RoundFailure(
          BridgeError.of("invalid_input_request", "the requestState member is not a string"),
        );
      }
      const count = Object.keys(requests).length;
      if (count > limits.max_input_requests) {
        throw new RoundFailure(
          BridgeError.of(
            "too_many_input_requests",
            `${count} input requests in one round, limit: ${limits.max_input_requests}`,
          ),
        );
      }
      const asked = new Set<string>();
      for (const request of Object.values(requests)) {
        if (
          isObject(request) && isObject(request.params) && typeof request.params.url === "string"
        ) {
          asked.add(request.params.url);
        }
      }
      // The steps that this result no longer asks for are complete.
      completeSteps(asked);
      const started = Date.now();
      const responses = await askRound(env, requests, accepted, options.signal);
      waitedMs = Date.now() - started;
      extra = { inputResponses: responses };
      if (typeof raw.requestState === "string") extra.requestState = raw.requestState;
    } catch (error) {
      completeSteps(new Set());
      if (error instanceof RoundFailure) return { kind: "error", error: error.error };
      if (options.signal.aborted) return { kind: "canceled" };
      throw error;
    }
  }
}

function requestStateRule(
  method: string,
  error: { code: number; message: string; data?: Json },
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
  signal: AbortSignal,
): Promise<JsonObject> {
  const responses: JsonObject = {};
  const questions: { question: Question; params: JsonObject; method: string }[] = [];
  for (const [key, request] of Object.entries(requests)) {
    const checked = checkInputRequest(request, env.declared);
    if (!checked.ok) throw inputFailure(key, checked.failure.cause, checked.failure.text);
    const { task: _task, ...params } = checked.params;
    const method = (request as JsonObject).method as string;
    if (checked.kind === "url") {
      const url = params.url as string;
      if (!isAllowedUrl(url)) {
        env.log.warn(
          `refused the URL of the input request '${key}': it is not https, or http on a loopback host`,
        );
        responses[key] = { action: "decline" };
        continue;
      }
      const step = accepted.get(url);
      if (step && env.declared.form) {
        questions.push({
          question: { key, kind: "continue_url", url, elicitationId: step.elicitationId },
          params: continueForm(CONTINUE_MESSAGE),
          method,
        });
        continue;
      }
      const elicitationId = step?.elicitationId ?? env.nextElicitationId();
      questions.push({
        question: { key, kind: "url", url, elicitationId },
        params: { ...params, elicitationId },
        method,
      });
      continue;
    }
    if (checked.kind === "form") {
      const schema = params.requestedSchema as JsonObject;
      const empty = !isObject(schema.properties) || Object.keys(schema.properties).length === 0;
      if (empty) {
        questions.push({
          question: { key, kind: "continue_form" },
          params: continueForm(params.message as string),
          method,
        });
        continue;
      }
      questions.push({
        question: { key, kind: "form", validate: checked.validate },
        params,
        method,
      });
      continue;
    }
    questions.push({ question: { key, kind: checked.kind }, params, method });
  }
  if (questions.length === 0) return responses;

  // Every entry goes in before its question goes out; all questions go out at one time.
  const open = questions.map(({ question, params, method }) => {
    const entry = env.pending.open();
    env.write({ jsonrpc: "2.0", id: entry.id, method, params });
    return { question, entry };
  });
  const ids = open.map((o) => o.entry.id);
  const cancelQuestions = (reason: string) => {
    for (const id of env.pending.remove(ids)) {
      env.write({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason },
      });
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
  const answers = Promise.all(open.map((o) => o.entry.answer));
  const first = await Promise.race([answers, stop]);
  clearTimeout(timer);
  signal.removeEventListener("abort", onAbort!);
  if (first === "timeout") {
    cancelQuestions(CANCEL_REASONS.timeout);
    throw new RoundFailure(BridgeError.of("input_timeout"));
  }
  if (first === "aborted") {
    cancelQuestions(String(signal.reason ?? CANCEL_REASONS.client));
    throw signal.reason instanceof Error ? signal.reason : new Error("canceled");
  }
  if (first === "upstream") {
    cancelQuestions(CANCEL_REASONS.upstream);
    throw new RoundFailure(BridgeError.of("upstream_exited"));
  }
  first.forEach((answer, i) => {
    const { question } = open[i]!;
    responses[question.key] = toResponse(question, answer, accepted);
  });
  return responses;
}

/** The value for the upstream server from one answer of the client (the answers table). */
function toResponse(question: Question, answer: Answer, accepted: Map<string, UrlStep>): Json {
  const invalid = () => new RoundFailure(BridgeError.of("invalid_client_answer"));
  switch (question.kind) {
    case "sampling":
    case "roots": {
      if (answer.kind === "invalid") throw invalid();
      if (answer.kind === "error") throw new RoundFailure(BridgeError.passthrough(answer.error));
      if (question.kind === "sampling") {
        if (!isSamplingResult(answer.result)) throw invalid();
        return answer.result;
      }
      if (!isRootsResult(answer.result)) throw invalid();
      return {
        roots: answer.result.roots.filter((root) => (root.uri as string).startsWith("file://")),
      };
    }
    default: {
      if (answer.kind !== "result") return { action: "cancel" };
      const result = answer.result;
      if (!isElicitResult(result)) throw invalid();
      const action = result.action as string;
      if (question.kind === "url") {
        if (action === "accept") {
          accepted.set(question.url!, { elicitationId: question.elicitationId! });
        }
        return { action };
      }
      if (question.kind === "continue_url") return { action };
      if (question.kind === "continue_form") {
        return action === "accept" ? { action, content: {} } : { action };
      }
      if (action !== "accept") return { action };
      const content = result.content ?? {};
      if (!question.validate?.(content)) throw invalid();
      return { action, content };
    }
  }
}
