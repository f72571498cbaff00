/**
 * How an upstream failure becomes the error of the client: the only place
 * that maps an {@linkcode UpstreamFailure} to a {@linkcode BridgeError}.
 *
 * @module
 */

import type { RequestId } from "../jsonrpc/message.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { CODES, SEE_OUTPUT } from "./error_table.ts";
import { BridgeError, fromUpstreamError, RESERVED_URL_CODE } from "./errors.ts";

/**
 * The detail of a failed request to an upstream server at a URL: the HTTP
 * status, after the upstream's message when the body had a JSON-RPC error.
 */
export function statusDetail(
  status: number | undefined,
  upstreamMessage?: string,
): string | undefined {
  if (status === undefined) return undefined;
  return upstreamMessage === undefined
    ? `HTTP status ${status}`
    : `${upstreamMessage} (HTTP status ${status})`;
}

/**
 * The detail of a failure: the bridge's own words with the status (a refusal
 * of the proxy), else the status after the upstream's message.
 */
function ownDetail(failure: UpstreamFailure): string | undefined {
  if (failure.detail === undefined) return statusDetail(failure.status, failure.upstreamMessage);
  return failure.status === undefined
    ? failure.detail
    : `${failure.detail} (HTTP status ${failure.status})`;
}

/**
 * The error of a failed sign-in: its cause of the table (the type of
 * `SignInCause` makes each one a row of the table), or sign_in_failed when the
 * failure has no cause.
 */
function signInError(failure: UpstreamFailure): BridgeError {
  const info = failure.signIn;
  if (!info) return BridgeError.of("sign_in_failed");
  return BridgeError.of(info.cause, info.detail ?? statusDetail(failure.status), info.placeholders);
}

/**
 * The error for a forwarded request: the upstream error unchanged (but
 * -32042), or the cause of the table. `limit` is the text of the time limit.
 *
 * @example
 * ```ts
 * import { mapUpstreamFailure } from "./failures.ts";
 * import { UpstreamFailure } from "../upstream/failure.ts";
 * const error = mapUpstreamFailure(new UpstreamFailure("transport_failed", { status: 404 }), "tools/list", "120 s");
 * if ((error.data as { detail: string }).detail !== "HTTP status 404") throw new Error();
 * ```
 */
export function mapUpstreamFailure(error: unknown, method: string, limit: string): BridgeError {
  if (!(error instanceof UpstreamFailure)) {
    return BridgeError.of(error instanceof RangeError ? "out_of_memory" : "transport_failed");
  }
  return clientError(error, method, limit).withSeen(error.transport);
}

/** The error of the client for an upstream failure (see {@linkcode mapUpstreamFailure}). */
function clientError(error: UpstreamFailure, method: string, limit: string): BridgeError {
  const status = ownDetail(error);
  switch (error.kind) {
    case "rpc":
      return error.error ? fromUpstreamError(error.error) : BridgeError.of("rpc", status);
    case "timeout":
      return BridgeError.of("timeout", `method: ${method}, limit: ${limit}`);
    case "exited":
      return BridgeError.of("upstream_exited");
    case "closed":
      return BridgeError.of("closed", status);
    case "transport_failed":
      return BridgeError.of("transport_failed", status);
    case "invalid_response":
      return BridgeError.of("invalid_response", status);
    case "spawn_failed":
      return BridgeError.of("spawn_failed");
    case "connect_failed":
      return BridgeError.of("connect_failed");
    case "sign_in":
      return signInError(error);
    case "canceled":
      // Only the bridge cancels without the client; the client sees a closed request.
      return BridgeError.of("closed");
  }
}

/**
 * The error for a failed server/discover: the cause discover_failed, with
 * the upstream code (but -32042, which becomes -32603) and the upstream
 * message as the detail, or `no response in <limit>`. A start that failed
 * keeps its own cause (spawn_failed, connect_failed, a sign-in cause).
 */
export function mapDiscoverFailure(error: unknown, limit: string): BridgeError {
  if (!(error instanceof UpstreamFailure)) {
    return BridgeError.of("discover_failed", `no response in ${limit}`);
  }
  return discoverError(error, limit).withSeen(error.transport);
}

/** The error of the client for a failed server/discover (see {@linkcode mapDiscoverFailure}). */
function discoverError(error: UpstreamFailure, limit: string): BridgeError {
  const status = ownDetail(error);
  switch (error.kind) {
    case "rpc": {
      if (!error.error) return BridgeError.of("discover_failed", "the error has no error object");
      const code = error.error.code === RESERVED_URL_CODE ? CODES.INTERNAL_ERROR : error.error.code;
      return BridgeError.withCode("discover_failed", code, error.error.message);
    }
    case "exited":
    case "closed":
      return BridgeError.of("discover_failed", status ?? "the upstream server process stopped");
    case "invalid_response":
      return BridgeError.of("discover_failed", status ?? "the response is not valid");
    case "transport_failed":
      return BridgeError.of("discover_failed", status ?? "the connection failed");
    case "spawn_failed":
    case "connect_failed":
    case "sign_in":
      return mapUpstreamFailure(error, "server/discover", limit);
    case "timeout":
    case "canceled":
      return BridgeError.of("discover_failed", `no response in ${limit}`);
  }
}

/** The longest detail that a log line quotes. */
const MAX_DETAIL_CHARS = 200;

/** `text` on one line, cut at 200 characters. */
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  const line = text.replaceAll(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return line.length > MAX_DETAIL_CHARS ? `${line.slice(0, MAX_DETAIL_CHARS)}...` : line;
}

/**
 * `cause: detail` of an error, for a log line (the start's, a failed
 * request's) and the doctor report: the client's `data.cause` and `data.detail` (which hold no secret
 * and no URL: the error table's rule), the detail on one line and cut at 200
 * characters. An error without a cause is the upstream server's own, which
 * the client gets unchanged: `error <code>: <message>`.
 *
 * @example
 * ```ts
 * import { BridgeError } from "./errors.ts";
 * import { failureSummary } from "./failures.ts";
 * const line = failureSummary(BridgeError.of("discover_failed", "Method not found"));
 * if (line !== "discover_failed: Method not found") throw new Error(line);
 * ```
 */
export function failureSummary(error: BridgeError): string {
  const data = error.data as { cause?: unknown; detail?: unknown } | undefined;
  if (typeof data?.cause !== "string") return `error ${error.code}: ${oneLine(error.message)}`;
  if (typeof data.detail !== "string" || data.detail.trim() === "") return data.cause;
  return `${data.cause}: ${oneLine(data.detail)}`;
}

/**
 * {@linkcode failureSummary}, then what the transport saw in brackets: the
 * words of a log line of a failure (a failed request, a failed start).
 *
 * @example
 * ```ts
 * import { BridgeError } from "./errors.ts";
 * import { failureReport } from "./failures.ts";
 * const error = BridgeError.of("discover_failed", "HTTP status 200").withSeen("the connection was reset");
 * const text = failureReport(error);
 * if (text !== "discover_failed: HTTP status 200 [the connection was reset]") throw new Error(text);
 * ```
 */
export function failureReport(error: BridgeError): string {
  return error.seen === undefined
    ? failureSummary(error)
    : `${failureSummary(error)} [${error.seen}]`;
}

/** The longest id of a request that a failure line quotes. */
const MAX_ID_CHARS = 40;

/**
 * The log line of a request of the client that failed with `error`, or
 * undefined when the error's message does not send the user to the Output
 * channel (an error of the upstream server, a refusal of the bridge that
 * says all). It names the method, the request's id, the cause and its
 * detail, and what the transport saw; never the URL, a header or a token
 * (none of them is in an error: the error table's rule).
 *
 * @example
 * ```ts
 * import { BridgeError } from "./errors.ts";
 * import { failureLine } from "./failures.ts";
 * const error = BridgeError.of("transport_failed", "HTTP status 200").withSeen("GOAWAY NO_ERROR");
 * const line = failureLine("tools/call", 7, error);
 * if (line !== "tools/call (request 7) failed: transport_failed: HTTP status 200 [GOAWAY NO_ERROR]") {
 *   throw new Error(line);
 * }
 * if (failureLine("tools/call", 7, BridgeError.of("invalid_params")) !== undefined) throw new Error();
 * ```
 */
export function failureLine(method: string, id: RequestId, error: BridgeError): string | undefined {
  if (!error.message.includes(SEE_OUTPUT)) return undefined;
  const idText = oneLine(JSON.stringify(id)).slice(0, MAX_ID_CHARS);
  return `${method} (request ${idText}) failed: ${failureReport(error)}`;
}
