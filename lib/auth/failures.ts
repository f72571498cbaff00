/**
 * The failures of a sign-in: an `UpstreamFailure` of the kind `sign_in` with
 * a cause of the error table, its detail and its placeholders. The front end
 * (`errors/failures.ts`) turns it into the error for the client.
 *
 * @module
 */

import { type SignInCause, UpstreamFailure } from "../upstream/failure.ts";

/** The sign-in causes of the error table (defined in `upstream/failure.ts`). */
export type { SignInCause };

/**
 * A sign-in failure. `detail` must hold no URL, code, verifier or token.
 */
export function signInFailure(
  cause: SignInCause,
  detail?: string,
  placeholders?: Readonly<Record<string, string | number>>,
  status?: number,
): UpstreamFailure {
  return new UpstreamFailure("sign_in", {
    signIn: {
      cause,
      ...(detail !== undefined && { detail }),
      ...(placeholders !== undefined && { placeholders }),
    },
    ...(status !== undefined && { status }),
  });
}

/** sign_in_timeout with the seconds of --sign-in-timeout and the name of the program. */
export function timeoutFailure(signInTimeoutMs: number, name: string): UpstreamFailure {
  return signInFailure("sign_in_timeout", undefined, {
    seconds: Math.max(1, Math.round(signInTimeoutMs / 1000)),
    name,
  });
}

/** True for a sign-in failure of the given cause. */
export function isSignInFailure(error: unknown, cause?: SignInCause): error is UpstreamFailure {
  return error instanceof UpstreamFailure && error.kind === "sign_in" &&
    (cause === undefined || error.signIn?.cause === cause);
}

/**
 * The log line of a needed sign-in in VS Code's sandbox: it names the
 * `login` command and the origin of the server, never its path or query
 * (they can hold a key).
 */
export function sandboxLine(name: string, serverUrl: string): string {
  const origin = new URL(serverUrl).origin;
  return `a new sign-in is needed, and the sandbox of VS Code blocks it: run "${name} login URL" ` +
    `in a terminal, with the URL of this server (at ${origin}) and its sign-in options, ` +
    `then restart the server`;
}
