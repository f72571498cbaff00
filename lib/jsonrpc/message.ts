/**
 * JSON-RPC 2.0 message types and guards.
 *
 * @module
 */

/**
 * Any JSON value.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A JSON object.
 *
 * @example
 * ```ts
 * import { isObject, type JsonObject } from "./message.ts";
 * const params: JsonObject = { name: "echo", arguments: { text: "hi" } };
 * if (!isObject(params.arguments) || params.arguments.text !== "hi") throw new Error();
 * ```
 */
export type JsonObject = { [key: string]: Json };

/**
 * An id whose JSON token no JavaScript value writes back as it came: an
 * integer beyond 2^53 (`9007199254740993`), an exponent (`1e308`), `-0`,
 * `1.0`, a string with escapes (`"\u0041"`). It holds the token itself, as
 * `JSON.rawJSON` makes it: JSON.stringify writes the token unchanged, so the
 * client gets back exactly the id it sent. Never put one in a template
 * string: it has no prototype, so it has no text conversion.
 */
// A type, not an interface: it is also a Json object (what it is at run time).
export type RawId = { readonly rawJSON: string };

/**
 * A request id: JSON-RPC allows strings and integers (MCP forbids null). An
 * id of the client that a plain value would change is a {@linkcode RawId}.
 *
 * @example
 * ```ts
 * import { idOfToken, type RequestId } from "./message.ts";
 * const ids: RequestId[] = ["a-1", 7, idOfToken("9007199254740993")!];
 * // The exact id goes back as the client wrote it.
 * if (JSON.stringify(ids) !== '["a-1",7,9007199254740993]') throw new Error();
 * ```
 */
export type RequestId = string | number | RawId;

/** JSON.rawJSON and JSON.isRawJSON of Deno 2.9, which the TypeScript library does not type yet. */
const RAW_JSON = JSON as unknown as {
  rawJSON(text: string): RawId;
  isRawJSON(value: unknown): boolean;
};

/** True for a {@linkcode RawId}. */
export function isRawId(value: unknown): value is RawId {
  return RAW_JSON.isRawJSON(value);
}

/**
 * The exact integer that a JSON number token denotes, as decimal digits
 * (`"1.5e1"` → `"15"`, `"-0"` → `"0"`); undefined when the token is not an
 * integer (`"1.5"`, `"1e-1"`) or not a JSON number.
 */
export function integerDigits(token: string): string | undefined {
  const match = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(token);
  if (!match) return undefined;
  const [, sign, whole, fraction = "", exponentText = "0"] = match;
  const all = (whole! + fraction).replace(/^0+/, "");
  if (all === "") return "0";
  const digits = all.replace(/0+$/, "");
  const exponent = Number(exponentText) - fraction.length + (all.length - digits.length);
  // Above 400 digits no double is finite: JSON.parse gave Infinity, not an id.
  if (exponent < 0 || digits.length + exponent > 400) return undefined;
  return sign + digits + "0".repeat(exponent);
}

/**
 * The id of a JSON token of an id (the text of a member `id`): a string or a
 * number when its value writes back as the same token, else a
 * {@linkcode RawId}; undefined for a token that is not an id (not a string,
 * not an integer). The id scan and the parsed path both use it, so they agree.
 *
 * @example
 * ```ts
 * import { idOfToken } from "./message.ts";
 * if (idOfToken("7") !== 7 || idOfToken('"a"') !== "a" || idOfToken("1.5") !== undefined) throw new Error();
 * if (JSON.stringify({ id: idOfToken("1e308") }) !== '{"id":1e308}') throw new Error();
 * ```
 */
export function idOfToken(token: string): RequestId | undefined {
  let value: unknown;
  try {
    value = JSON.parse(token);
  } catch {
    return undefined;
  }
  if (typeof value === "string") return JSON.stringify(value) === token ? value : rawId(token);
  if (typeof value !== "number" || integerDigits(token) === undefined) return undefined;
  return String(value) === token ? value : rawId(token);
}

function rawId(token: string): RawId {
  return RAW_JSON.rawJSON(token);
}

/** A request: it has a method and an id. */
export interface Request {
  readonly jsonrpc: "2.0";
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Json;
}

/**
 * A notification: it has a method and no id.
 */
export interface Notification {
  readonly jsonrpc: "2.0";
  readonly method: string;
  readonly params?: Json;
}

/**
 * The error object of an error response.
 */
export interface ErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: Json;
}

/** A response: a result or an error for an id. */
export type Response =
  | { readonly jsonrpc: "2.0"; readonly id: RequestId; readonly result: Json }
  | { readonly jsonrpc: "2.0"; readonly id: RequestId | null; readonly error: ErrorObject };

/**
 * Any message that this project writes.
 */
export type Message = Request | Notification | Response;

/**
 * True for a plain JSON object (not null, not an array).
 *
 * @example
 * ```ts
 * import { isObject } from "./message.ts";
 * if (!isObject({ a: 1 }) || isObject([1]) || isObject(null) || isObject("a")) throw new Error();
 * ```
 */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * True for a valid request id: a string, an integer, or a {@linkcode RawId}.
 *
 * @example
 * ```ts
 * import { idOfToken, isRequestId } from "./message.ts";
 * if (!isRequestId("a") || !isRequestId(7) || !isRequestId(idOfToken("1e308"))) throw new Error();
 * if (isRequestId(null) || isRequestId(1.5) || isRequestId({ id: 1 })) throw new Error();
 * ```
 */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value)) ||
    isRawId(value);
}

/**
 * The string of a string id, also of a {@linkcode RawId} with a string token.
 *
 * @example
 * ```ts
 * import { idOfToken, idString } from "./message.ts";
 * if (idString("a") !== "a" || idString(1) !== undefined) throw new Error();
 * // A string id written with an escape keeps its token, and its string is still "A".
 * if (idString(idOfToken('"\\u0041"')!) !== "A") throw new Error();
 * ```
 */
export function idString(id: RequestId): string | undefined {
  if (typeof id === "string") return id;
  if (typeof id === "number" || !id.rawJSON.startsWith('"')) return undefined;
  return JSON.parse(id.rawJSON) as string;
}

/**
 * A key for maps of ids: the string "1" and the number 1 are different ids.
 * Ids with the same value have the same key, whatever their token: `"\u0041"`
 * and `"A"`, `1.0` and `1`; `9007199254740993` and `9007199254740992` differ.
 *
 * @example
 * ```ts
 * import { idKey, idOfToken } from "./message.ts";
 * if (idKey("1") === idKey(1)) throw new Error("a string and a number are different ids");
 * if (idKey(idOfToken("1.0")!) !== idKey(1)) throw new Error("1.0 and 1 are the same id");
 * if (idKey(idOfToken('"\\u0041"')!) !== idKey("A")) throw new Error();
 * ```
 */
export function idKey(id: RequestId): string {
  if (typeof id === "string") return `s:${id}`;
  if (typeof id === "number") {
    return Number.isSafeInteger(id) ? `n:${id}` : `n:${integerDigits(String(id)) ?? id}`;
  }
  const text = idString(id);
  if (text !== undefined) return `s:${text}`;
  return `n:${integerDigits(id.rawJSON) ?? id.rawJSON}`;
}

/**
 * True when `message` has the shape of a response (no method; a result or an
 * error) and is not the response of the request whose {@linkcode idKey} is
 * `own` (none is, without `own`): on the exchange of one request, the
 * response of another, whatever else is wrong with it.
 */
export function isForeignResponse(message: unknown, own: string | undefined): boolean {
  if (!isObject(message) || typeof message.method === "string") return false;
  if (!Object.hasOwn(message, "result") && !Object.hasOwn(message, "error")) return false;
  return !isRequestId(message.id) || idKey(message.id) !== own;
}
