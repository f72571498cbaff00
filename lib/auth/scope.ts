/**
 * The scope a sign-in asks for: the challenge's `scope`, else
 * `scopes_supported` of the protected resource metadata, else none; a
 * step-up asks for the scope of before and more; `offline_access` where the
 * authorization server names it (for a refresh token).
 *
 * @module
 */

import { computeScopeUnion } from "@modelcontextprotocol/client";
import type { ServerInfo } from "./discovery.ts";
import type { ServerEntry } from "./store.ts";

/** The scope of one sign-in. */
export function signInScope(
  challengeScope: string | undefined,
  stepUp: boolean,
  entry: ServerEntry,
  info: ServerInfo,
): string | undefined {
  const base = challengeScope ??
    (info.resourceScopes?.length ? info.resourceScopes.join(" ") : undefined);
  const scope = stepUp
    ? computeScopeUnion(entry.tokens?.requestedScope, entry.tokens?.scope, base)
    : base;
  // As the SDK's own flow does: ask for a refresh token where the server names offline_access.
  if (scope !== undefined && info.metadata.scopes_supported?.includes("offline_access")) {
    return computeScopeUnion(scope, "offline_access");
  }
  return scope;
}
