/**
 * The checks of an authorization URL before the browser gets it.
 *
 * @module
 */

import { isLoopbackHost } from "../net/loopback.ts";

/**
 * The checks of an authorization URL before the browser gets it: https (or
 * http on a loopback host), our `state` and redirect URI, PKCE S256.
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
