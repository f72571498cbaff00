/**
 * The questions of a round and the answer table: which request the client
 * gets for each input request (with the Continue form and the URL rule), and
 * which value the upstream server gets for each answer of the client.
 * Pure functions over JSON; each returns a result.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { BridgeError } from "../errors/errors.ts";
import type { FormCheck } from "./form_schema.ts";
import {
  checkInputRequest,
  type Declared,
  isElicitResult,
  isRootsResult,
  isSamplingResult,
} from "./input_checks.ts";
import type { Answer } from "./pending.ts";
import type { RoundResult } from "./round_checks.ts";
import { isAllowedUrl } from "./url_rule.ts";

/** The message of the Continue form after a URL that the user accepted. */
export const CONTINUE_MESSAGE = "Complete the step in the web browser. Then select Continue.";

/**
 * The form with one required choice, for VS Code, which cannot show a form without a property.
 */
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

/** A URL step that the user accepted and that is not complete. */
export interface UrlStep {
  readonly elicitationId: string;
}

/** One question of a round, and what its answer becomes. */
export type Question =
  | { readonly key: string; readonly kind: "sampling" | "roots" | "continue_form" }
  | { readonly key: string; readonly kind: "form"; readonly validate: FormCheck | undefined }
  | {
    readonly key: string;
    readonly kind: "url" | "continue_url";
    readonly url: string;
    readonly elicitationId: string;
  };

/** A question and the request to the client that asks it. */
export interface Outgoing {
  readonly question: Question;
  readonly method: string;
  readonly params: JsonObject;
}

/** The questions of a round, and the responses that need none. */
export interface Plan {
  /** In the order of the input requests. */
  readonly questions: readonly Outgoing[];
  /** A URL that the bridge refuses gets a decline without a question. */
  readonly responses: JsonObject;
}

/** What the questions of a round depend on. */
export interface PlanContext {
  readonly declared: Declared;
  /** The URL steps of the request that the user accepted: URL → step. */
  readonly accepted: ReadonlyMap<string, UrlStep>;
  /** A new elicitation id, unique on the connection. */
  readonly nextElicitationId: () => string;
  /** Called for each URL that the URL rule refuses, in the order of the input requests. */
  readonly onRefusedUrl: (key: string) => void;
}

function inputFailure(
  key: string,
  cause: "invalid_input_request" | "undeclared_input_request",
  text: string,
): RoundResult<never> {
  return { ok: false, error: BridgeError.of(cause, `input request '${key}': ${text}`) };
}

/** Checks every input request of a round and makes its question; one failed check fails all. */
export function planQuestions(requests: JsonObject, context: PlanContext): RoundResult<Plan> {
  const responses: JsonObject = {};
  const questions: Outgoing[] = [];
  for (const [key, request] of Object.entries(requests)) {
    const checked = checkInputRequest(request, context.declared);
    if (!checked.ok) return inputFailure(key, checked.failure.cause, checked.failure.text);
    const { task: _task, ...params } = checked.params;
    const method = (request as JsonObject).method as string;
    switch (checked.kind) {
      case "url": {
        const url = params.url as string;
        if (!isAllowedUrl(url)) {
          context.onRefusedUrl(key);
          responses[key] = { action: "decline" };
          break;
        }
        const step = context.accepted.get(url);
        if (step && context.declared.form) {
          const { elicitationId } = step;
          questions.push({
            question: { key, kind: "continue_url", url, elicitationId },
            params: continueForm(CONTINUE_MESSAGE),
            method,
          });
          break;
        }
        const elicitationId = step?.elicitationId ?? context.nextElicitationId();
        questions.push({
          question: { key, kind: "url", url, elicitationId },
          params: { ...params, elicitationId },
          method,
        });
        break;
      }
      case "form": {
        const schema = params.requestedSchema as JsonObject;
        const empty = !isObject(schema.properties) || Object.keys(schema.properties).length === 0;
        questions.push(
          empty
            ? {
              question: { key, kind: "continue_form" },
              params: continueForm(params.message as string),
              method,
            }
            : { question: { key, kind: "form", validate: checked.validate }, params, method },
        );
        break;
      }
      default:
        questions.push({ question: { key, kind: checked.kind }, params, method });
    }
  }
  return { ok: true, value: { questions, responses } };
}

/** The value for the upstream server from one answer, and the URL step that the user accepted. */
export interface Response {
  readonly value: Json;
  readonly accepted?: { readonly url: string; readonly step: UrlStep };
}

const invalid = (): RoundResult<never> => ({
  ok: false,
  error: BridgeError.of("invalid_client_answer"),
});

/** The answer table: the value for the upstream server from one answer of the client. */
export function toResponse(question: Question, answer: Answer): RoundResult<Response> {
  const value = (v: Json): RoundResult<Response> => ({ ok: true, value: { value: v } });
  switch (question.kind) {
    case "sampling":
    case "roots": {
      if (answer.kind === "invalid") return invalid();
      if (answer.kind === "error") {
        return { ok: false, error: BridgeError.passthrough(answer.error) };
      }
      if (question.kind === "sampling") {
        return isSamplingResult(answer.result) ? value(answer.result) : invalid();
      }
      if (!isRootsResult(answer.result)) return invalid();
      return value({
        roots: answer.result.roots.filter((root) => (root.uri as string).startsWith("file://")),
      });
    }
    default: {
      if (answer.kind !== "result") return value({ action: "cancel" });
      const result = answer.result;
      if (!isElicitResult(result)) return invalid();
      const action = result.action as string;
      switch (question.kind) {
        case "url": {
          if (action !== "accept") return value({ action });
          const step = { elicitationId: question.elicitationId };
          return { ok: true, value: { value: { action }, accepted: { url: question.url, step } } };
        }
        case "continue_url":
          return value({ action });
        case "continue_form":
          return value(action === "accept" ? { action, content: {} } : { action });
        case "form": {
          if (action !== "accept") return value({ action });
          const content = result.content ?? {};
          return question.validate?.(content) ? value({ action, content }) : invalid();
        }
      }
    }
  }
}

/**
 * The `inputResponses` of a round from the answers, in the order of the
 * questions; a URL step that the user accepted goes into `accepted` at once.
 */
export function responsesOf(
  plan: Plan,
  answers: readonly Answer[],
  accepted: Map<string, UrlStep>,
): RoundResult<JsonObject> {
  const responses: JsonObject = { ...plan.responses };
  for (const [i, { question }] of plan.questions.entries()) {
    const response = toResponse(question, answers[i]!);
    if (!response.ok) return response;
    if (response.value.accepted) {
      accepted.set(response.value.accepted.url, response.value.accepted.step);
    }
    responses[question.key] = response.value.value;
  }
  return { ok: true, value: responses };
}
