/**
 * JSON-RPC 2.0 message types and guards.
 *
 * @module
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** A request id: JSON-RPC allows strings and integers (MCP forbids null). */
export type RequestId = string | number;

/** A request: it has a method and an id. */
export interface Request {
  readonly jsonrpc: "2.0";
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Json;
}

/** A notification: it has a method and no id. */
export interface Notification {
  readonly jsonrpc: "2.0";
  readonly method: string;
  readonly params?: Json;
}

/** The error object of an error response. */
export interface ErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: Json;
}

/** A response: a result or an error for an id. */
export type Response =
  | { readonly jsonrpc: "2.0"; readonly id: RequestId; readonly result: Json }
  | { readonly jsonrpc: "2.0"; readonly id: RequestId | null; readonly error: ErrorObject };

/** Any message that this project writes. */
export type Message = Request | Notification | Response;

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a valid request id: a string or an integer. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isInteger(value));
}

/** A key for maps of ids: the string "1" and the number 1 are different ids. */
export function idKey(id: RequestId): string {
  return typeof id === "string" ? `s:${id}` : `n:${id}`;
}
