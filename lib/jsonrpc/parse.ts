/**
 * Parsing of one line: strict UTF-8, a nesting limit that fails fast, and the
 * classification of the value as a JSON-RPC 2.0 message.
 *
 * @module
 */

import { isObject, isRequestId, type Json, type JsonObject, type RequestId } from "./message.ts";

/** The default nesting limit of a message. */
export const DEFAULT_MAX_DEPTH = 64;

/** Why a line is not a message. The names are causes of the error table. */
export type ParseFailure = "parse_error" | "too_deep";

/** The outcome of {@linkcode parseLine}. */
export type ParseOutcome =
  | { readonly ok: true; readonly value: Json }
  | { readonly ok: false; readonly cause: ParseFailure };

/**
 * The deepest nesting of an upstream line. The upstream server has no limit
 * of the spec, but the bridge re-serializes what it forwards, and V8's
 * JSON.stringify recurses on its slow path (an object after `delete`, about
 * 5,300 levels from a shallow stack): a line deeper than this fails its own
 * request with invalid_response instead of the process. A 1,000-level value
 * in a result still passes.
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_DEPTH, parseLine, UPSTREAM_MAX_DEPTH } from "./parse.ts";
 * const deep = new TextEncoder().encode("[".repeat(1_000) + "]".repeat(1_000));
 * if (!parseLine(deep, UPSTREAM_MAX_DEPTH).ok) throw new Error("a server's line may be 1,000 deep");
 * if (parseLine(deep, DEFAULT_MAX_DEPTH).ok) throw new Error("a client's line may not");
 * ```
 */
export const UPSTREAM_MAX_DEPTH = 2_000;

// Decoding without `fatal` is about 3× faster on large lines (63 MiB: 39 ms
// against 133 ms); only a line whose text has a U+FFFD can be invalid UTF-8,
// and only that line gets the strict decode.
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes one line as UTF-8; undefined when it is not valid UTF-8. A BOM
 * stays in the text (JSON.parse then refuses it), as a strict decode does.
 *
 * @example
 * ```ts
 * import { decodeLine } from "./parse.ts";
 * if (decodeLine(new Uint8Array([0x22, 0xff, 0x22])) !== undefined) throw new Error();
 * if (decodeLine(new TextEncoder().encode('"\ufffd"')) !== '"\ufffd"') throw new Error();
 * ```
 */
export function decodeLine(bytes: Uint8Array): string | undefined {
  const text = lenient.decode(bytes);
  if (text.indexOf("\ufffd") === -1) return text;
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Returns the deepest nesting of arrays and objects in a JSON text, or stops
 * with `Infinity` as soon as it passes `limit`. It does not recurse and does
 * not validate the text; strings are skipped with their escapes.
 */
export function nestingDepth(bytes: Uint8Array, limit: number): number {
  let depth = 0;
  let deepest = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === 0x22) {
      // A native search for the closing quote: long strings (the bulk of a
      // large result) cost no loop over their bytes in JavaScript.
      let end = i;
      for (;;) {
        end = bytes.indexOf(0x22, end + 1);
        if (end === -1) return deepest; // an open string: the parser refuses the line
        let slashes = 0;
        while (bytes[end - 1 - slashes] === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end;
    } else if (b === 0x7b || b === 0x5b) {
      if (++depth > limit) return Infinity;
      if (depth > deepest) deepest = depth;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Parses one line: invalid UTF-8 and invalid JSON are `parse_error`; more than
 * `maxDepth` levels of nesting are `too_deep`, found before any parse.
 *
 * @example
 * ```ts
 * import { parseLine } from "./parse.ts";
 * const out = parseLine(new TextEncoder().encode("[[[]]]"), 2);
 * if (out.ok || out.cause !== "too_deep") throw new Error("expected too_deep");
 * ```
 */
export function parseLine(bytes: Uint8Array, maxDepth: number = DEFAULT_MAX_DEPTH): ParseOutcome {
  const text = decodeLine(bytes);
  if (text === undefined) return { ok: false, cause: "parse_error" };
  // Each level opens with a byte of its own: a line of at most `maxDepth`
  // bytes cannot be deeper (every upstream line of a small result).
  if (bytes.length > maxDepth && nestingDepth(bytes, maxDepth) === Infinity) {
    return { ok: false, cause: "too_deep" };
  }
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch {
    return { ok: false, cause: "parse_error" };
  }
}

/**
 * A JSON value classified as a JSON-RPC 2.0 message.
 *
 * @example
 * ```ts
 * import { type Classified, classify } from "./parse.ts";
 * function describe(c: Classified): string {
 *   switch (c.kind) {
 *     case "request":
 *       return `request ${c.method}`;
 *     case "notification":
 *       return `notification ${c.method}`;
 *     case "response":
 *       return "response";
 *     case "invalid":
 *       return c.replyId === undefined ? "dropped" : "error response";
 *   }
 * }
 * if (describe(classify({ jsonrpc: "2.0", id: 1, method: "ping" })) !== "request ping") {
 *   throw new Error();
 * }
 * if (describe(classify([1])) !== "error response") throw new Error();
 * ```
 */
export type Classified =
  | {
    readonly kind: "request";
    readonly id: RequestId;
    readonly method: string;
    readonly params: Json | undefined;
  }
  | { readonly kind: "notification"; readonly method: string; readonly params: Json | undefined }
  | { readonly kind: "response"; readonly id: RequestId; readonly message: JsonObject }
  /** Not a message. `replyId` is the id of the error response, or `undefined` for no response. */
  | { readonly kind: "invalid"; readonly replyId: RequestId | null | undefined };

/**
 * Classifies a parsed value. A request needs `jsonrpc: "2.0"`, a string method
 * and, when it has an id, a string or integer id. A response of the client
 * with a null id or an id of another type, and an error response without an
 * id, get no answer.
 *
 * @example
 * ```ts
 * import { classify } from "./parse.ts";
 * const request = classify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
 * if (request.kind !== "request" || request.id !== 1) throw new Error();
 * if (classify({ jsonrpc: "2.0", method: "notifications/initialized" }).kind !== "notification") {
 *   throw new Error();
 * }
 * // No jsonrpc member: invalid, answered with the request's id.
 * const bad = classify({ id: 2, method: "ping" });
 * if (bad.kind !== "invalid" || bad.replyId !== 2) throw new Error();
 * // A response with a bad id gets no answer.
 * const response = classify({ jsonrpc: "2.0", id: null, result: {} });
 * if (response.kind !== "invalid" || response.replyId !== undefined) throw new Error();
 * ```
 */
export function classify(value: Json): Classified {
  if (!isObject(value)) return { kind: "invalid", replyId: null };
  const hasId = Object.hasOwn(value, "id");
  const id = value.id;
  const validId = hasId && isRequestId(id);
  const isRpc = value.jsonrpc === "2.0";
  if (Object.hasOwn(value, "method")) {
    if (!isRpc || typeof value.method !== "string") {
      return { kind: "invalid", replyId: validId ? id : null };
    }
    if (!hasId) return { kind: "notification", method: value.method, params: value.params };
    if (!validId) return { kind: "invalid", replyId: null };
    return { kind: "request", id, method: value.method, params: value.params };
  }
  const isResult = Object.hasOwn(value, "result");
  const isError = Object.hasOwn(value, "error");
  if (isResult || isError) {
    // A response never gets an answer, valid or not.
    if (!validId || !isRpc || isResult === isError) return { kind: "invalid", replyId: undefined };
    if (isError && !isErrorObject(value.error)) return { kind: "invalid", replyId: undefined };
    return { kind: "response", id, message: value };
  }
  return { kind: "invalid", replyId: validId ? id : null };
}

function isErrorObject(value: Json | undefined): boolean {
  return isObject(value) && Number.isInteger(value.code) && typeof value.message === "string";
}
