/**
 * The scope of a sign-in (REMOTE.md): the challenge's `scope`, else
 * `scopes_supported` of the protected resource metadata, else none; a
 * step-up asks for the scope of before and more; `offline_access` is added
 * where the authorization server names it.
 */

import { strictEqual } from "node:assert/strict";
import type { AuthorizationServerMetadata } from "@modelcontextprotocol/client";
import type { ServerInfo } from "../../lib/auth/discovery.ts";
import { signInScope } from "../../lib/auth/scope.ts";
import type { ServerEntry } from "../../lib/auth/store.ts";

const EMPTY: ServerEntry = { clients: [] };

function info(resourceScopes?: string[], scopesSupported?: string[]): ServerInfo {
  return {
    authorizationServerUrl: "https://as.example/",
    metadata: {
      issuer: "https://as.example/",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      response_types_supported: ["code"],
      ...(scopesSupported && { scopes_supported: scopesSupported }),
    } as AuthorizationServerMetadata,
    resource: "https://mcp.example/",
    resourceScopes,
  };
}

Deno.test("signInScope: the challenge's scope first, else the resource's scopes_supported, else none", () => {
  strictEqual(signInScope("read", false, EMPTY, info(["a", "b"])), "read");
  strictEqual(signInScope(undefined, false, EMPTY, info(["a", "b"])), "a b");
  strictEqual(signInScope(undefined, false, EMPTY, info([])), undefined);
  strictEqual(signInScope(undefined, false, EMPTY, info()), undefined);
});

Deno.test("signInScope: offline_access only where the authorization server names it, and never alone", () => {
  strictEqual(
    signInScope("read", false, EMPTY, info(undefined, ["read", "offline_access"])),
    "read offline_access",
  );
  strictEqual(signInScope("read", false, EMPTY, info(undefined, ["read"])), "read");
  // No scope to ask for: none, not offline_access by itself.
  strictEqual(signInScope(undefined, false, EMPTY, info(undefined, ["offline_access"])), undefined);
});

Deno.test("signInScope: a step-up asks for the scope asked and granted before, and the new one", () => {
  const entry: ServerEntry = {
    clients: [],
    tokens: {
      accessToken: "a",
      tokenType: "Bearer",
      scope: "read",
      requestedScope: "read profile",
    },
  };
  strictEqual(signInScope("write", true, entry, info()), "read profile write");
  // Not a step-up: only the new challenge's scope.
  strictEqual(signInScope("write", false, entry, info()), "write");
  // A step-up without stored tokens is the scope of the challenge.
  strictEqual(signInScope("write", true, EMPTY, info()), "write");
});
