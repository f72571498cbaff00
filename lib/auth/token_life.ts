/**
 * The life of stored tokens: when an access token is used as it is, and the
 * stored form of a token response (its lifetime as an instant).
 *
 * @module
 */

import type { OAuthTokens } from "@modelcontextprotocol/client";
import type { StoredTokens } from "./store.ts";

/** A token that expires sooner than this is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 60_000;

/** The stored form of the tokens of a token response; `requestedScope` is what was asked. */
export function toStored(tokens: OAuthTokens, requestedScope: string | undefined): StoredTokens {
  const scope = tokens.scope ?? requestedScope;
  return {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type,
    ...(tokens.refresh_token !== undefined && { refreshToken: tokens.refresh_token }),
    ...(tokens.expires_in !== undefined && { expiresAt: Date.now() + tokens.expires_in * 1000 }),
    ...(scope !== undefined && { scope }),
    ...(requestedScope !== undefined && { requestedScope }),
  };
}

/** True for tokens whose access token is valid for more than {@linkcode REFRESH_MARGIN_MS}. */
export function usable(tokens: StoredTokens | undefined): boolean {
  return tokens !== undefined &&
    (tokens.expiresAt === undefined || tokens.expiresAt - Date.now() > REFRESH_MARGIN_MS);
}
