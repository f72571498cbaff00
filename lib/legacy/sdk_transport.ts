/**
 * The v1 SDK's `StreamableHTTPClientTransport` as the 2025-11-25 link uses
 * it: one per session, on the link's fetch, without its own GET stream (the
 * link opens that one: `get_stream.ts`), and what the link reads of its
 * errors: the HTTP status only, never the message (it can hold the body of
 * a response or the URL).
 *
 * @module
 */

import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../jsonrpc/message.ts";
import { transportSight } from "../http/transport_failure.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { isConnectionFailure, type SessionLoss } from "./get_stream.ts";
import { ownExchangeFetch } from "./own_exchange.ts";

/** The transport of one session. */
export type SessionTransport = StreamableHTTPClientTransport;

/** Options of {@linkcode sessionTransport}. */
export interface SessionTransportOptions {
  readonly url: URL;
  /** The headers of `--header-env`. */
  readonly headers: readonly (readonly [string, string])[];
  /** The fetch of the link. */
  readonly fetch: typeof fetch;
  /** Each message of the server on the POST responses. */
  readonly onMessage: (message: JsonObject, transport: SessionTransport) => void;
  readonly debug: (message: string) => void;
}

/** The HTTP status of an error of the SDK's transport (its code, when it is one). */
export function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof StreamableHTTPError)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" && code > 0 ? code : undefined;
}

/** What a failed POST of a request means: its failure, and a lost session. */
export interface SendFailure {
  readonly failure: UpstreamFailure;
  readonly loss?: SessionLoss;
}

/**
 * The failure of a request whose POST failed with `error`, and whether the
 * session is lost: a 404 of a live session (the session expired: `closed`),
 * or no connection (the server is away). A body that the transport's schema
 * refused is invalid_response. The failure says what the transport saw,
 * never the message of the error (it names the URL).
 *
 * @example
 * ```ts
 * import { sendFailureOf } from "./sdk_transport.ts";
 * const { failure, loss } = sendFailureOf(new TypeError("fetch failed"), true);
 * if (failure.kind !== "transport_failed" || loss !== "connection") throw new Error();
 * ```
 */
export function sendFailureOf(error: unknown, liveSession: boolean): SendFailure {
  // The bounded fetch fails a request of an error status itself (`error_status_body.ts`).
  const fetched = error instanceof UpstreamFailure ? error : undefined;
  if (fetched && !(fetched.status === 404 && liveSession)) return { failure: fetched };
  // The transport's schema refused a body that the bounded fetch let through.
  if (error instanceof Error && error.name === "ZodError") {
    return { failure: new UpstreamFailure("invalid_response") };
  }
  const status = fetched?.status ?? httpStatusOf(error);
  if (status === 404 && liveSession) {
    return { failure: new UpstreamFailure("closed", { status }), loss: "session" };
  }
  const transport = transportSight(error).words;
  if (status === undefined && isConnectionFailure(error)) {
    return { failure: new UpstreamFailure("transport_failed", { transport }), loss: "connection" };
  }
  const facts = status === undefined ? { transport } : { status };
  return { failure: new UpstreamFailure("transport_failed", facts) };
}

/** Settles when `promise` does, or after `ms`; never rejects. */
export function withDeadline(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.then(() => {}, () => {}),
    new Promise<void>((resolve) => timer = setTimeout(resolve, ms)),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A failure in words for a debug line: its kind and status, never the
 * message of a fetch error (it names the URL).
 *
 * @example
 * ```ts
 * import { failureKindOf } from "./sdk_transport.ts";
 * if (failureKindOf(new TypeError("error sending request for url (https://x/?key=1)")) !== "no connection") throw new Error();
 * ```
 */
export function failureKindOf(error: unknown): string {
  if (error instanceof UpstreamFailure) {
    return error.status === undefined ? error.kind : `${error.kind}, HTTP status ${error.status}`;
  }
  const status = httpStatusOf(error);
  if (status !== undefined) return `HTTP status ${status}`;
  return isConnectionFailure(error) ? "no connection" : "transport error";
}

/**
 * A transport of the SDK for one session, started. Its GETs are refused (a
 * 405 that no server sent; it takes that as a server without a stream): its
 * own GET stream (the link opens one), and the resumption of a POST's
 * stream with `Last-Event-ID`. That resumption would go around the
 * own-exchange rule (the SDK gives each result on it the id of the request)
 * and could bring nothing: the request fails when its POST's stream ends
 * without its response. The body of a POST keeps only the response of its
 * own request (`own_exchange.ts`).
 */
export function sessionTransport(options: SessionTransportOptions): SessionTransport {
  const posts = ownExchangeFetch(options.fetch, options.debug);
  const fetchFn: typeof fetch = (input, init) => {
    if (init?.method === "GET") return Promise.resolve(new Response(null, { status: 405 }));
    return posts(input, init);
  };
  const transport = new StreamableHTTPClientTransport(options.url, {
    fetch: fetchFn,
    requestInit: { headers: Object.fromEntries(options.headers) },
  });
  transport.onmessage = (message: JSONRPCMessage) => {
    options.onMessage(message as unknown as JsonObject, transport);
  };
  transport.onerror = (error: unknown) => {
    const code = error instanceof UpstreamFailure ? error.status : httpStatusOf(error);
    const status = code === undefined ? "" : ` (HTTP status ${code})`;
    options.debug(`the 2025-11-25 HTTP transport reported an error${status}`);
  };
  // It sends nothing before the first message.
  transport.start().catch(() => {});
  return transport;
}
