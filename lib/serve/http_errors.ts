/**
 * The refusals of the HTTP face of `serve`, before a message reaches a
 * session: each with its HTTP status, and a JSON-RPC error without an id as
 * its body (as the transport allows). One table, so that
 * `deno task lint-messages` checks these messages as it checks the error
 * table's.
 *
 * @module
 */

/** One refusal: its status, its JSON-RPC code and its message. */
export interface HttpErrorRow {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

/** Every refusal of the HTTP face. */
export const HTTP_ERRORS = {
  session_required: {
    status: 400,
    code: -32000,
    message: "The request needs the Mcp-Session-Id header of its session. Send initialize first.",
  },
  session_not_found: {
    status: 404,
    code: -32001,
    message: "The session does not exist. It ended, or the server started again. " +
      "Send initialize again.",
  },
  not_accepted: {
    status: 400,
    code: -32600,
    message: "The server cannot accept this message. A response must be valid and answer a " +
      "request of the server.",
  },
  too_many_sessions: {
    status: 503,
    code: -32000,
    message: "The server has too many sessions. Try again later.",
  },
  stopping: { status: 503, code: -32000, message: "The server stops. Try again later." },
  busy: {
    status: 503,
    code: -32000,
    message: "The server reads too many large requests at one time. Try again later.",
  },
  forbidden: { status: 403, code: -32000, message: "The server does not accept this request." },
  unauthorized: {
    status: 401,
    code: -32000,
    message: "The request needs a valid bearer token in the Authorization header.",
  },
  protocol_version: {
    status: 400,
    code: -32000,
    message: "The server does not support the revision of the MCP-Protocol-Version header.",
  },
  not_acceptable: {
    status: 406,
    code: -32000,
    message: "The client must accept application/json and text/event-stream.",
  },
  stream_not_acceptable: {
    status: 406,
    code: -32000,
    message: "The client must accept text/event-stream.",
  },
  content_type: {
    status: 415,
    code: -32000,
    message: "The body must be JSON, with the content type application/json.",
  },
  body_timeout: {
    status: 408,
    code: -32000,
    message: "The body of the request did not arrive in time.",
  },
  method_not_allowed: {
    status: 405,
    code: -32000,
    message: "The MCP endpoint takes the methods GET, POST and DELETE.",
  },
} as const satisfies Record<string, HttpErrorRow>;

/** The name of a refusal. */
export type HttpErrorName = keyof typeof HTTP_ERRORS;

/**
 * The JSON-RPC error of a refusal for a request that the face had taken
 * already: its code and message, and its name as `data.cause` (a name of no
 * cause of the error table, which these rows are not).
 *
 * @example
 * ```ts
 * import { rpcErrorOf } from "./http_errors.ts";
 * const error = rpcErrorOf("stopping");
 * if (error.code !== -32000 || error.data.cause !== "stopping") throw new Error();
 * ```
 */
export function rpcErrorOf(
  name: HttpErrorName,
): { code: number; message: string; data: { cause: HttpErrorName } } {
  const { code, message } = HTTP_ERRORS[name];
  return { code, message, data: { cause: name } };
}

/**
 * The response of a refusal: its status and its JSON-RPC error body.
 *
 * @example
 * ```ts
 * import { httpError } from "./http_errors.ts";
 * const response = httpError("session_not_found");
 * if (response.status !== 404) throw new Error();
 * const body = await response.json();
 * if (body.id !== null || body.error.code !== -32001) throw new Error();
 * ```
 */
export function httpError(name: HttpErrorName, headers: HeadersInit = {}): Response {
  const { status, code, message } = HTTP_ERRORS[name];
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }),
    { status, headers: { ...headers, "content-type": "application/json" } },
  );
}
