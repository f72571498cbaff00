/**
 * How a failed upstream request becomes the error of the client.
 *
 * @module
 */

import { UpstreamFailure } from "../upstream/session.ts";
import { CODES } from "./error_table.ts";
import { BridgeError, fromUpstreamError, RESERVED_URL_CODE } from "./errors.ts";

/**
 * The error for a forwarded request: the upstream error unchanged (but
 * -32042), or the cause of the table. `limit` is the text of the time limit.
 */
export function mapUpstreamFailure(error: unknown, method: string, limit: string): BridgeError {
  if (!(error instanceof UpstreamFailure)) {
    return BridgeError.of(error instanceof RangeError ? "out_of_memory" : "transport_failed");
  }
  switch (error.kind) {
    case "rpc":
      return error.error ? fromUpstreamError(error.error) : BridgeError.of("rpc");
    case "timeout":
      return BridgeError.of("timeout", `method: ${method}, limit: ${limit}`);
    case "exited":
      return BridgeError.of("upstream_exited");
    case "closed":
      return BridgeError.of("closed");
    case "transport_failed":
      return BridgeError.of("transport_failed");
    case "invalid_response":
      return BridgeError.of("invalid_response");
    case "canceled":
      // Only the bridge cancels without the client; the client sees a closed request.
      return BridgeError.of("closed");
  }
}

/**
 * The error for a failed server/discover: the cause discover_failed, with
 * the upstream code (but -32042, which becomes -32603) and the upstream
 * message as the detail, or `no response in <limit>`.
 */
export function mapDiscoverFailure(error: unknown, limit: string): BridgeError {
  if (error instanceof UpstreamFailure && error.kind === "rpc" && error.error) {
    const code = error.error.code === RESERVED_URL_CODE ? CODES.INTERNAL_ERROR : error.error.code;
    return BridgeError.withCode("discover_failed", code, error.error.message);
  }
  if (error instanceof UpstreamFailure) {
    switch (error.kind) {
      case "exited":
      case "closed":
        return BridgeError.of("discover_failed", "the upstream server process stopped");
      case "invalid_response":
        return BridgeError.of("discover_failed", "the response is not valid");
      case "rpc":
        return BridgeError.of("discover_failed", "the error has no error object");
      case "transport_failed":
        return BridgeError.of("discover_failed", "the connection failed");
    }
  }
  return BridgeError.of("discover_failed", `no response in ${limit}`);
}
