/**
 * How the HTTP link reads the answer to one POST of a request: one JSON
 * object, an SSE stream of that request (progress, log messages, requests of
 * the server, then the response), or an error status.
 *
 * A response counts only on its own exchange: a response with another id in
 * the body or stream of a request is not an answer to anything, and is
 * dropped with a debug line (settling the other request with it would drop
 * that request's own answer later).
 *
 * @module
 */

import { scanIdFromHead } from "../jsonrpc/id_scan.ts";
import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { decodeUpstream } from "./decode.ts";
import { type ErrorBody, UpstreamFailure } from "./failure.ts";
import { HEADER_MISMATCH } from "./http_headers.ts";
import { readBounded, readJsonBody, TooLargeError } from "../http/bounded_body.ts";
import { readEvents } from "../http/sse.ts";
import { STREAM_ENDED, transportSight } from "../http/transport_failure.ts";

/** The bytes of an error body that are read for its message. */
export const ERROR_BODY_BYTES = 64 * 1024;
/** The longest upstream message that a failure carries. */
const MAX_MESSAGE_CHARS = 200;

/** The media type of a Content-Type header, lower case, or undefined. */
function mediaType(header: string | null): string | undefined {
  if (header === null) return undefined;
  return header.split(";", 1)[0]!.trim().toLowerCase();
}

/** True for a response (a result or an error, no method). */
export function isResponse(message: JsonObject): boolean {
  return typeof message.method !== "string" &&
    (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"));
}

/**
 * True for the response (result or error) of the request `id`.
 */
export function isResponseOf(message: JsonObject, id: Json): boolean {
  return message.id === id && isResponse(message);
}

/**
 * The message of a JSON-RPC error response, as one short line without
 * control characters, or undefined.
 */
export function errorMessageOf(message: JsonObject | undefined): string | undefined {
  const error = message && isResponse(message) && isObject(message.error)
    ? message.error
    : undefined;
  if (typeof error?.message !== "string") return undefined;
  // deno-lint-ignore no-control-regex
  const line = error.message.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (line === "") return undefined;
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}...` : line;
}

/** What the body of an error status holds: its message, and the sign it shows. */
interface ErrorBodyFacts {
  readonly message?: JsonObject;
  readonly sign?: ErrorBody;
}

/**
 * The sign of the body of an error status: a JSON-RPC error object, or a
 * text that asks for a session. A server of revision 2025-11-25 answers
 * server/discover so (`--protocol auto` reads it; no second request is
 * needed).
 */
export function errorBodySign(text: string): ErrorBody | undefined {
  try {
    const value = JSON.parse(text);
    if (isObject(value) && isObject(value.error) && typeof value.error.code === "number") {
      return "jsonrpc_error";
    }
  } catch {
    // not JSON: the text may still ask for a session
  }
  return /\bsession\b/i.test(text) ? "asks_for_session" : undefined;
}

/** Reads at most {@linkcode ERROR_BODY_BYTES} of the body of an error status. */
async function readErrorBody(
  response: Response,
  type: string | undefined,
): Promise<ErrorBodyFacts> {
  const body = response.body;
  // An SSE body of an error status can stay open: it is not read.
  if (
    !body || type === "text/event-stream" ||
    (type !== "application/json" && !type?.startsWith("text/"))
  ) {
    await body?.cancel().catch(() => {});
    return {};
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(body, ERROR_BODY_BYTES);
  } catch (error) {
    if (error instanceof TooLargeError) return {};
    throw error;
  }
  // An HTML page that names a session is no sign: only JSON and plain text count.
  const sign = type === "application/json" || type === "text/plain"
    ? errorBodySign(new TextDecoder().decode(bytes))
    : undefined;
  const message = type === "application/json" ? decodeUpstream(bytes) : undefined;
  return { ...(message && { message }), ...(sign && { sign }) };
}

/** What {@linkcode readRequestResponse} reads for, and where its messages go. */
export interface RequestResponseOptions {
  /** The id of the request of this exchange. */
  readonly id: Json;
  /** The largest JSON body and SSE event. */
  readonly limit: number;
  /** A 400 with the header mismatch error is returned, not given (tools/call). */
  readonly mayRetry: boolean;
  /** Gives one message of the exchange to the client. */
  deliver(message: JsonObject): void | Promise<void>;
  /** After a request of the server on the stream: the reading waits for it. */
  serverRequest(): Promise<void>;
  readonly debug?: (message: string) => void;
}

/**
 * Reads the response of a request and gives its messages. Throws an
 * {@linkcode UpstreamFailure} when the response fails the request; a
 * failure of an error status has the status, and the message of the
 * JSON-RPC error of the body when it has one. With `mayRetry`, a 400 with
 * the header mismatch error of the request is returned as "header_mismatch".
 */
export async function readRequestResponse(
  response: Response,
  options: RequestResponseOptions,
): Promise<"done" | "header_mismatch"> {
  const { id, limit } = options;
  const status = response.status;
  const type = mediaType(response.headers.get("content-type"));
  if (status < 200 || status > 299 || status === 202) {
    const ok = status >= 200 && status <= 299;
    if (ok) {
      await response.body?.cancel().catch(() => {});
      throw new UpstreamFailure("invalid_response", { status });
    }
    const body = await readErrorBody(response, type);
    if (status === 400 && body.message && isResponseOf(body.message, id)) {
      // Revision 2026-07-28 answers a request that it refuses with a 400
      // and the JSON-RPC error of that request: the error goes on.
      const error = isObject(body.message.error) ? body.message.error : undefined;
      if (options.mayRetry && error?.code === HEADER_MISMATCH) return "header_mismatch";
      await options.deliver(body.message);
      return "done";
    }
    const upstreamMessage = errorMessageOf(body.message);
    throw new UpstreamFailure("transport_failed", {
      status,
      ...(upstreamMessage !== undefined && { upstreamMessage }),
      ...(body.sign && { errorBody: body.sign }),
    });
  }
  if (type === "application/json") {
    const message = decodeUpstream(await readJsonBody(response, limit));
    if (!message) throw new UpstreamFailure("invalid_response");
    if (isResponse(message) && message.id !== id) {
      options.debug?.("dropped a response to another request in the body of a request");
      throw new UpstreamFailure("invalid_response");
    }
    await options.deliver(message);
    if (!isResponseOf(message, id)) throw new UpstreamFailure("invalid_response");
    return "done";
  }
  const body = response.body;
  if (!body || type !== "text/event-stream") {
    await body?.cancel().catch(() => {});
    throw new UpstreamFailure("invalid_response", { status });
  }
  for await (const event of readEvents(body, limit)) {
    if (event.event !== "message") continue;
    const message = decodeUpstream(event.data);
    if (!message) {
      // As a line of a stdio server: the request named in it fails.
      const scan = scanIdFromHead(event.data);
      if (scan.found && scan.id === id) throw new UpstreamFailure("invalid_response");
      options.debug?.("dropped an upstream event that is not a message");
      continue;
    }
    if (isResponse(message) && message.id !== id) {
      options.debug?.("dropped a response to another request in the stream of a request");
      continue;
    }
    await options.deliver(message);
    // The stream of a request ends with its response.
    if (isResponseOf(message, id)) return "done";
    if (typeof message.method === "string" && Object.hasOwn(message, "id")) {
      await options.serverRequest();
    }
  }
  // The stream ended before the response (a connection that dropped throws from the read).
  throw new UpstreamFailure("transport_failed", { transport: STREAM_ENDED });
}

/**
 * What the transport saw when the body of a response failed before the
 * response message of its request came (`error` thrown by
 * {@linkcode readRequestResponse} after the head): the connection cut it
 * (closed, reset), or the stream ended without it. Undefined for every
 * other failure of the exchange: an error status, a body that is not valid
 * or over the limit, the sign-in. A repeatable request may go once more
 * after such a cut (REMOTE.md, the HTTP link).
 *
 * @example
 * ```ts
 * import { bodyCut } from "./http_response.ts";
 * const cut = bodyCut(new TypeError("error reading a body from connection"));
 * if (cut !== "the connection failed during the body of the response") throw new Error(cut);
 * ```
 */
export function bodyCut(error: unknown): string | undefined {
  if (error instanceof UpstreamFailure) {
    return error.kind === "transport_failed" && error.transport === STREAM_ENDED
      ? STREAM_ENDED
      : undefined;
  }
  if (error instanceof TooLargeError) return undefined;
  return transportSight(error).words;
}

/**
 * The failure of a request whose exchange threw `error`, with `status`, the
 * status of its response once its head came (every failure after the head
 * names it): a failure of the link's as it is, a body over the limit
 * invalid_response, anything else (a fetch that failed, a body cut after its
 * head) transport_failed with what the transport saw. It names no URL.
 *
 * @example
 * ```ts
 * import { requestFailure } from "./http_response.ts";
 * const failure = requestFailure(new TypeError("error reading a body from connection"), 200);
 * if (failure.kind !== "transport_failed" || failure.status !== 200) throw new Error();
 * ```
 */
export function requestFailure(error: unknown, status: number | undefined): UpstreamFailure {
  const facts = status === undefined ? {} : { status };
  if (error instanceof UpstreamFailure) {
    if (error.status !== undefined || status === undefined || error.kind === "sign_in") {
      return error;
    }
    return new UpstreamFailure(error.kind, {
      ...facts,
      ...(error.error && { error: error.error }),
      ...(error.detail !== undefined && { detail: error.detail }),
      ...(error.transport !== undefined && { transport: error.transport }),
    });
  }
  if (error instanceof TooLargeError) return new UpstreamFailure("invalid_response", facts);
  return new UpstreamFailure("transport_failed", {
    ...facts,
    transport: transportSight(error).words,
  });
}

/**
 * The response of a request of the link's own (its tools/list), or
 * undefined: nothing of it reaches the client.
 */
export async function readOwnResponse(
  response: Response,
  id: string,
  limit: number,
): Promise<JsonObject | undefined> {
  const type = mediaType(response.headers.get("content-type"));
  const ok = response.status >= 200 && response.status <= 299;
  if (ok && type === "application/json") {
    const message = decodeUpstream(await readJsonBody(response, limit));
    return message && isResponseOf(message, id) ? message : undefined;
  }
  const body = response.body;
  if (!body || !ok || type !== "text/event-stream") {
    await body?.cancel().catch(() => {});
    return undefined;
  }
  for await (const event of readEvents(body, limit)) {
    const message = event.event === "message" ? decodeUpstream(event.data) : undefined;
    if (message && isResponseOf(message, id)) return message;
  }
  return undefined;
}

/**
 * A response of this status carries the request's response in its body: a
 * 2xx but 202. A failure in the body of any other status is no cut body to
 * send again: its request fails with that status (REMOTE.md's HTTP rows).
 */
export function bodyMayCarryResponse(status: number): boolean {
  return status >= 200 && status < 300 && status !== 202;
}
