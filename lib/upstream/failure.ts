/**
 * The one failure type of the upstream side: why an upstream request failed,
 * or how the link ended. It can carry the HTTP status of a failed request
 * and, for a sign-in, the cause of the error table. `errors/failures.ts` is
 * the only place that turns it into an error for the client.
 *
 * @module
 */

import type { ErrorObject } from "../jsonrpc/message.ts";

/** Why an upstream request failed, or why the link could not start: every {@linkcode FailureKind}. */
export const FAILURE_KINDS = [
  /** The upstream server answered with an error object (or without a valid one). */
  "rpc",
  /** No response in the time limit. */
  "timeout",
  /** The caller's signal aborted the request. */
  "canceled",
  /** The child process stopped. */
  "exited",
  /** The link closed, or was closed. */
  "closed",
  /** The transport failed. */
  "transport_failed",
  /** The response could not be read (too long, not JSON, no result, too large). */
  "invalid_response",
  /** The upstream command could not start. */
  "spawn_failed",
  /** The client for the URL could not be made. */
  "connect_failed",
  /** A sign-in was needed and failed; `signIn` has the cause. */
  "sign_in",
] as const;

/** Why an upstream request failed, or why the link could not start (the members of {@linkcode FAILURE_KINDS}). */
export type FailureKind = typeof FAILURE_KINDS[number];

/**
 * The sign-in causes of the error table (`errors/error_table.ts`), the rows
 * from `sign_in_failed` to its end. They are written here because the upstream
 * side does not import the bridge; `tests/upstream/failure_test.ts` checks
 * that they are the table's, and `errors/failures.ts` that each is a cause of
 * the table.
 */
export const SIGN_IN_CAUSES = [
  "sign_in_failed",
  "sign_in_timeout",
  "sign_in_denied",
  "sign_in_error",
  "sign_in_invalid_url",
  "sign_in_start_reused",
  "browser_launch_failed",
  "redirect_port_unavailable",
  "registration_unavailable",
  "registration_failed",
  "issuer_not_registered",
  "invalid_client_metadata_url",
  "access_refused",
  "reauthorization_required",
  "sandbox",
] as const;

/** A sign-in cause of the error table, such as `sign_in_timeout` or `sandbox`. */
export type SignInCause = typeof SIGN_IN_CAUSES[number];

/** A failed sign-in: a cause of the error table with its detail and placeholders. */
export interface SignInFailureInfo {
  /** A sign-in cause of the error table, such as `sign_in_timeout` or `sandbox`. */
  readonly cause: SignInCause;
  readonly detail?: string;
  /** The placeholders of the message, such as `{ seconds: 300 }`. */
  readonly placeholders?: Readonly<Record<string, string | number>>;
}

/** What the body of a failed HTTP request showed (see {@linkcode FailureFacts.errorBody}). */
export type ErrorBody = "jsonrpc_error" | "asks_for_session";

/** Facts of a failure beyond its kind. */
export interface FailureFacts {
  /** The upstream error object of an `rpc` failure. */
  readonly error?: ErrorObject;
  /** The HTTP status of a failed request to an upstream server at a URL. */
  readonly status?: number;
  /**
   * The message of the JSON-RPC error in the body of a failed HTTP request,
   * one short line (the upstream's own words, for `data.detail`).
   */
  readonly upstreamMessage?: string;
  /**
   * What the body of a failed HTTP request showed: a JSON-RPC error object,
   * or a text that asks for a session (the signs of a server of revision
   * 2025-11-25 to `--protocol auto`).
   */
  readonly errorBody?: ErrorBody;
  /** The cause of a failed sign-in. */
  readonly signIn?: SignInFailureInfo;
  /**
   * The bridge's own words for `data.detail`, before the status (for example
   * that the proxy refused the connection). No URL, no value of a header.
   */
  readonly detail?: string;
  /**
   * What the transport saw, in the fixed words of `http/transport_failure.ts`
   * or of the link (a GOAWAY, a reset stream, a connection closed, a stream
   * that ended before its response), for the log line of the failed request
   * only: the client's error does not carry it.
   */
  readonly transport?: string;
}

/**
 * A failed upstream request or start. It names no URL, header, token or
 * output of the child: its message is safe to log.
 *
 * @example
 * ```ts
 * import { UpstreamFailure } from "./failure.ts";
 * const failure = new UpstreamFailure("transport_failed", { status: 502 });
 * if (failure.status !== 502) throw new Error();
 * ```
 */
export class UpstreamFailure extends Error {
  readonly kind: FailureKind;
  readonly error: ErrorObject | undefined;
  readonly status: number | undefined;
  readonly upstreamMessage: string | undefined;
  readonly errorBody: ErrorBody | undefined;
  readonly signIn: SignInFailureInfo | undefined;
  readonly detail: string | undefined;
  readonly transport: string | undefined;

  constructor(kind: FailureKind, facts: FailureFacts = {}) {
    super(
      kind === "rpc" && facts.error
        ? `upstream error ${facts.error.code}`
        : facts.status !== undefined
        ? `upstream request failed: ${kind}, HTTP status ${facts.status}`
        : `upstream request failed: ${kind}`,
    );
    this.name = "UpstreamFailure";
    this.kind = kind;
    this.error = facts.error;
    this.status = facts.status;
    this.upstreamMessage = facts.upstreamMessage;
    this.errorBody = facts.errorBody;
    this.signIn = facts.signIn;
    this.detail = facts.detail;
    this.transport = facts.transport;
  }
}
