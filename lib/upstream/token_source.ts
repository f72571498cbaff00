/**
 * The seam between the HTTP link and the sign-in: the link asks a token
 * source for the `Authorization` header of each request and reports each
 * 401/403 challenge; the sign-in part of `lib/auth/` implements it. The link
 * knows nothing of OAuth, and the sign-in nothing of JSON-RPC.
 *
 * @module
 */

import type { UrlPrompt } from "./link.ts";

/** A 401 or 403 response of the upstream server. */
export interface Challenge {
  /** 401 or 403. */
  readonly status: number;
  /** The `WWW-Authenticate` header, when the response has one. */
  readonly wwwAuthenticate: string | undefined;
}

/** What the link does after a challenge. */
export type ChallengeOutcome =
  /** A new token is there: send the request again, once. */
  | "retry"
  /** No sign-in can help (for example a second challenge after a step-up). */
  | "refused";

/**
 * Gives the HTTP link its `Authorization` header and answers challenges.
 * A sign-in that fails rejects with an `UpstreamFailure` of the kind
 * `sign_in` (its `signIn.cause` names the row of the error table).
 */
export interface TokenSource {
  /**
   * The header value (`Bearer ...`) for the next request, or undefined when
   * the store has no token and no sign-in was asked for yet. It refreshes a
   * token that expires within a minute. It never starts a browser by itself.
   */
  authorization(signal: AbortSignal): Promise<string | undefined>;
  /**
   * A challenge of the upstream server: starts a sign-in (or a step-up for a
   * 403 `insufficient_scope`), and resolves when the request can go again.
   * `attempt` counts the challenges of this one request (1 for the first).
   */
  challenge(challenge: Challenge, attempt: number, signal: AbortSignal): Promise<ChallengeOutcome>;
  /** How a later sign-in asks the client to open the start URL (set by the front end). */
  setUrlPrompt(prompt: UrlPrompt | undefined): void;
  /** Resolves at the next sign-in that succeeds. */
  nextSignIn(): Promise<void>;
}
