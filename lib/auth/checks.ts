/**
 * The checks of an authorization URL before the browser gets it.
 *
 * @module
 */

import { isLoopbackHost } from "../net/loopback.ts";

/**
 * The checks of an authorization URL before the browser gets it: https (or
 * http on a loopback host), our `state` and redirect URI, PKCE S256.
 *
 * @example
 * ```ts
 * import { authorizationUrlIsValid } from "./checks.ts";
 * const url = new URL(
 *   "https://as.example/authorize?response_type=code&state=s&redirect_uri=r&code_challenge=c&code_challenge_method=S256",
 * );
 * if (!authorizationUrlIsValid(url, "s", "r")) throw new Error();
 * if (authorizationUrlIsValid(url, "other", "r")) throw new Error();
 * ```
 */
export function authorizationUrlIsValid(url: URL, state: string, redirectUri: string): boolean {
  const secure = url.protocol === "https:" ||
    (url.protocol === "http:" && isLoopbackHost(url.hostname));
  const params = url.searchParams;
  return secure && url.username === "" && url.password === "" &&
    params.get("state") === state && params.get("redirect_uri") === redirectUri &&
    params.get("code_challenge_method") === "S256" && (params.get("code_challenge") ?? "") !== "" &&
    params.get("response_type") === "code";
}
