/**
 * The checks of an input request before the client gets a question, and the
 * shapes of the client's answers. Each check returns a result; none throws
 * (a form needs {@linkcode loadFormChecks} first, as the rounds do).
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import type { Cause } from "../errors/error_table.ts";
import type { FormCheck } from "./form_schema.ts";

/** The compiler of requestedSchema, once {@linkcode loadFormChecks} loaded it. */
let compileSchema: ((schema: JsonObject) => FormCheck | undefined) | undefined;

/**
 * Loads the compiler of requestedSchema (./form_schema.ts: ajv and the
 * linear-time regular expressions), before the first round that asks the
 * client: about 20 MB of memory that a bridge whose server never asks for
 * input does not spend. Later calls cost nothing.
 */
export async function loadFormChecks(): Promise<void> {
  compileSchema ??= (await import("./form_schema.ts")).compileSchema;
}

/** One input request, classified. */
export type InputKind = "form" | "url" | "sampling" | "roots";

/** A failed check: the cause and the text of `data.detail`. */
export interface CheckFailure {
  readonly cause: Extract<Cause, "invalid_input_request" | "undeclared_input_request">;
  readonly text: string;
}

/** A checked input request. */
export type Checked =
  | {
    readonly ok: true;
    readonly kind: InputKind;
    readonly params: JsonObject;
    readonly validate?: FormCheck;
  }
  | { readonly ok: false; readonly failure: CheckFailure };

const SHAPE: CheckFailure = {
  cause: "invalid_input_request",
  text: "the input request does not have the shape of the schema",
};

const isString = (v: Json | undefined): v is string => typeof v === "string";

function isContentBlock(block: Json): boolean {
  return isObject(block) && isString(block.type);
}

function blocksOf(content: Json | undefined): Json[] | undefined {
  if (Array.isArray(content)) return content.every(isContentBlock) ? content : undefined;
  return content !== undefined && isContentBlock(content) ? [content] : undefined;
}

function isSamplingParams(params: JsonObject): boolean {
  if (!Array.isArray(params.messages) || typeof params.maxTokens !== "number") return false;
  return params.messages.every((m) =>
    isObject(m) && (m.role === "user" || m.role === "assistant") &&
    blocksOf(m.content) !== undefined
  );
}

/** True when the sampling request uses tools: tools, toolChoice, or a tool_use or tool_result block. */
function usesTools(params: JsonObject): boolean {
  if (params.tools !== undefined || params.toolChoice !== undefined) return true;
  return (params.messages as Json[]).some((m) =>
    blocksOf((m as JsonObject).content)!.some((b) => {
      const type = (b as JsonObject).type;
      return type === "tool_use" || type === "tool_result";
    })
  );
}

/**
 * The tool result rules of sampling messages: a message with a tool_result
 * block is a user message of tool_result blocks only, and it answers exactly
 * the tool_use ids of the assistant message before it; an assistant message
 * with tool_use blocks that is not the last one is answered so.
 */
export function obeysToolResultRules(messages: readonly Json[]): boolean {
  const blocks = messages.map((m) => blocksOf((m as JsonObject).content) ?? []);
  const ids = (list: Json[], type: string, key: string) =>
    list.filter((b) => (b as JsonObject).type === type).map((b) => (b as JsonObject)[key]);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as JsonObject;
    const results = ids(blocks[i]!, "tool_result", "toolUseId");
    const uses = ids(blocks[i]!, "tool_use", "id");
    if (results.length > 0) {
      if (message.role !== "user" || results.length !== blocks[i]!.length) return false;
      const previous = i > 0 ? ids(blocks[i - 1]!, "tool_use", "id") : [];
      if (i === 0 || (messages[i - 1] as JsonObject).role !== "assistant") return false;
      if (!sameSet(previous, results)) return false;
    }
    if (uses.length > 0) {
      if (message.role !== "assistant" || !uses.every(isString)) return false;
      const next = messages[i + 1] as JsonObject | undefined;
      if (next && !sameSet(uses, ids(blocks[i + 1]!, "tool_result", "toolUseId"))) return false;
    }
  }
  return true;
}

function sameSet(a: (Json | undefined)[], b: (Json | undefined)[]): boolean {
  if (a.length !== b.length || !a.every(isString) || !b.every(isString)) return false;
  const set = new Set(a);
  return set.size === a.length && b.every((x) => set.has(x as string));
}

/**
 * What the client declared, for the checks.
 *
 * @example
 * ```ts
 * import { checkInputRequest, type Declared } from "./input_checks.ts";
 * const declared: Declared = {
 *   form: true,
 *   url: false,
 *   sampling: false,
 *   samplingTools: false,
 *   roots: false,
 * };
 * const checked = checkInputRequest({ method: "roots/list" }, declared);
 * if (checked.ok || checked.failure.cause !== "undeclared_input_request") throw new Error();
 * ```
 */
export interface Declared {
  readonly form: boolean;
  readonly url: boolean;
  readonly sampling: boolean;
  readonly samplingTools: boolean;
  readonly roots: boolean;
}

/**
 * The capabilities that the client declared in initialize. `elicitation: {}` means the form mode.
 *
 * @example
 * ```ts
 * import { declaredOf } from "./input_checks.ts";
 * // `elicitation: {}` declares the form mode only.
 * const declared = declaredOf({ elicitation: {}, sampling: { tools: {} } });
 * if (!declared.form || declared.url || !declared.samplingTools) throw new Error();
 * if (declaredOf({ elicitation: { url: {} } }).form) throw new Error();
 * ```
 */
export function declaredOf(capabilities: Json | undefined): Declared {
  const caps = isObject(capabilities) ? capabilities : {};
  const elicitation = isObject(caps.elicitation) ? caps.elicitation : undefined;
  const sampling = isObject(caps.sampling) ? caps.sampling : undefined;
  return {
    form: elicitation !== undefined &&
      (isObject(elicitation.form) ||
        (elicitation.form === undefined && elicitation.url === undefined)),
    url: elicitation !== undefined && isObject(elicitation.url),
    sampling: sampling !== undefined,
    samplingTools: sampling !== undefined && isObject(sampling.tools),
    roots: isObject(caps.roots),
  };
}

/** Every check of the table "Checks before the client gets a question", in its order. */
export function checkInputRequest(request: Json | undefined, declared: Declared): Checked {
  if (!isObject(request) || !isString(request.method)) return { ok: false, failure: SHAPE };
  const params = request.params === undefined && request.method === "roots/list"
    ? {}
    : request.params;
  if (!isObject(params)) return { ok: false, failure: SHAPE };
  const undeclared = (text: string): Checked => ({
    ok: false,
    failure: { cause: "undeclared_input_request", text },
  });
  switch (request.method) {
    case "elicitation/create": {
      const mode = params.mode ?? "form";
      if (!isString(params.message)) return { ok: false, failure: SHAPE };
      if (mode === "url") {
        if (!isString(params.url)) return { ok: false, failure: SHAPE };
        if (!declared.url) return undeclared("the client did not declare elicitation.url");
        return { ok: true, kind: "url", params };
      }
      const schema = params.requestedSchema;
      if (mode !== "form" || !isObject(schema) || schema.type !== "object") {
        return { ok: false, failure: SHAPE };
      }
      if (schema.properties !== undefined && !isObject(schema.properties)) {
        return { ok: false, failure: SHAPE };
      }
      if (!declared.form) return undeclared("the client did not declare elicitation.form");
      if (!compileSchema) {
        throw new Error("loadFormChecks() comes before the first check of a form");
      }
      const validate = compileSchema(schema);
      if (!validate) {
        return {
          ok: false,
          failure: { cause: "invalid_input_request", text: "the requestedSchema does not compile" },
        };
      }
      return { ok: true, kind: "form", params, validate };
    }
    case "sampling/createMessage":
      if (!isSamplingParams(params)) return { ok: false, failure: SHAPE };
      if (!declared.sampling) return undeclared("the client did not declare sampling");
      if (usesTools(params) && !declared.samplingTools) {
        return undeclared(
          "sampling with tools needs sampling.tools, and the client did not declare it",
        );
      }
      if (!obeysToolResultRules(params.messages as Json[])) {
        return {
          ok: false,
          failure: {
            cause: "invalid_input_request",
            text: "the sampling messages do not obey the tool result rules",
          },
        };
      }
      return { ok: true, kind: "sampling", params };
    case "roots/list":
      if (!declared.roots) return undeclared("the client did not declare roots");
      return { ok: true, kind: "roots", params };
    default:
      return { ok: false, failure: SHAPE };
  }
}

/** An elicitation result: an action, and content that is an object when present. */
export function isElicitResult(result: Json): result is JsonObject {
  return isObject(result) &&
    (result.action === "accept" || result.action === "decline" || result.action === "cancel") &&
    (result.content === undefined || isObject(result.content));
}

/** A sampling result: role, content and model. */
export function isSamplingResult(result: Json): result is JsonObject {
  return isObject(result) && (result.role === "user" || result.role === "assistant") &&
    isString(result.model) && blocksOf(result.content) !== undefined;
}

/** A roots result: a list of roots, each with a string uri. */
export function isRootsResult(result: Json): result is JsonObject & { roots: JsonObject[] } {
  return isObject(result) && Array.isArray(result.roots) &&
    result.roots.every((root) => isObject(root) && isString(root.uri));
}
