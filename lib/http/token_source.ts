/**
 * The seam between the HTTP link and the sign-in: the link asks a token
 * source for the `Authorization` header of each request and reports each
 * 401/403 challenge; the sign-in part of `lib/auth/` implements it. The link
 * knows nothing of OAuth, and the sign-in nothing of JSON-RPC.
 *
 * @module
 */

import { UpstreamFailure } from "../upstream/failure.ts";
import type { UrlPrompt } from "../upstream/link.ts";

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

/** How many challenges one request answers before it is refused. */
const MAX_CHALLENGES = 3;

/** The failure of a request that the server still refuses after the sign-in. */
function refused(status: number): UpstreamFailure {
  return new UpstreamFailure("sign_in", {
    status,
    signIn: { cause: "access_refused", detail: `HTTP status ${status}` },
  });
}

/**
 * Sends a request with the token of `source`, and answers each 401 or 403
 * with a challenge to it, then sends once more (at most
 * {@linkcode MAX_CHALLENGES} times). Without a source, the first response is
 * the answer. Both HTTP links (revision 2026-07-28 and the 2025-11-25
 * transport of `--protocol auto`) send through it.
 *
 * @example
 * ```ts
 * import { sendWithChallenges } from "./token_source.ts";
 * const response = await sendWithChallenges(undefined, new AbortController().signal, () =>
 *   Promise.resolve(new Response(null, { status: 401 })));
 * if (response.status !== 401) throw new Error();
 * ```
 */
export async function sendWithChallenges(
  source: TokenSource | undefined,
  signal: AbortSignal,
  send: (token: string | undefined) => Promise<Response>,
): Promise<Response> {
  for (let attempt = 1;; attempt++) {
    const response = await send(await source?.authorization(signal));
    const status = response.status;
    if ((status !== 401 && status !== 403) || !source) return response;
    const wwwAuthenticate = response.headers.get("www-authenticate") ?? undefined;
    await response.body?.cancel().catch(() => {});
    if (attempt >= MAX_CHALLENGES) throw refused(status);
    let outcome;
    try {
      outcome = await source.challenge({ status, wwwAuthenticate }, attempt, signal);
    } catch (error) {
      if (error instanceof UpstreamFailure) throw error;
      throw new UpstreamFailure("sign_in", { status, signIn: { cause: "sign_in_failed" } });
    }
    if (outcome !== "retry") throw refused(status);
  }
}
