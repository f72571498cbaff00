/**
 * The refresh of stored tokens: the client that the tokens were issued to
 * (the flags' client, else the registration of the same issuer and redirect
 * URI, else the client metadata URL), and one refresh against a real
 * authorization server on 127.0.0.1: new tokens in their stored form, a
 * refusal that asks for a new sign-in, a failure of another cause thrown.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { refreshEntry, storedClient } from "../../lib/auth/refresh.ts";
import { SignInHttp } from "../../lib/auth/sign_in_fetch.ts";
import type { ServerEntry, StoredTokens } from "../../lib/auth/store.ts";
import { createLogger } from "../../lib/log.ts";
import { serveRaw } from "../fixtures/http_upstream.ts";

const REDIRECT = "http://127.0.0.1:33418/callback";

Deno.test("storedClient: the client of the flags first, with its secret", () => {
  const entry: ServerEntry = {
    issuer: "https://as.example",
    clients: [{
      issuer: "https://as.example",
      redirectUri: REDIRECT,
      client: { client_id: "reg" },
    }],
  };
  deepStrictEqual(storedClient({ clientId: "flag", clientSecret: "s" }, entry, REDIRECT), {
    client_id: "flag",
    client_secret: "s",
  });
  deepStrictEqual(storedClient({ clientId: "flag" }, entry, REDIRECT), { client_id: "flag" });
});

Deno.test("storedClient: the registration of the tokens' issuer and of this redirect URI, else the metadata URL", () => {
  const registered = { client_id: "reg", client_secret: "rs" };
  const entry: ServerEntry = {
    issuer: "https://as.example",
    clients: [
      { issuer: "https://other.example", redirectUri: REDIRECT, client: { client_id: "other" } },
      {
        issuer: "https://as.example",
        redirectUri: "http://127.0.0.1:1/callback",
        client: { client_id: "port" },
      },
      { issuer: "https://as.example", redirectUri: REDIRECT, client: registered },
    ],
  };
  deepStrictEqual(storedClient({}, entry, REDIRECT), registered);
  const cimd = "https://client.example/metadata.json";
  // Another redirect URI: no registration of it, so the metadata URL, else none.
  deepStrictEqual(storedClient({ clientMetadataUrl: cimd }, entry, "http://127.0.0.1:2/callback"), {
    client_id: cimd,
  });
  strictEqual(storedClient({}, entry, "http://127.0.0.1:2/callback"), undefined);
  // No issuer stored: no registration can be the tokens' client.
  strictEqual(storedClient({}, { clients: entry.clients }, REDIRECT), undefined);
});

/** An authorization server whose token endpoint answers with `token`. */
function authorizationServer(token: (form: URLSearchParams) => Response) {
  const forms: URLSearchParams[] = [];
  const server = serveRaw((request, body) => {
    const path = new URL(request.url).pathname;
    if (path === "/.well-known/oauth-authorization-server") {
      const issuer = new URL(request.url).origin;
      return Response.json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (path === "/token") {
      const form = new URLSearchParams(body);
      forms.push(form);
      return token(form);
    }
    return new Response(null, { status: 404 });
  }, "/");
  return Object.assign(server, { forms });
}

const TOKENS: StoredTokens = {
  accessToken: "old",
  tokenType: "Bearer",
  refreshToken: "r1",
  expiresAt: Date.now(),
  requestedScope: "read write",
};

const entryOf = (issuer: string) => ({
  issuer,
  resource: "https://mcp.example/",
  clients: [],
  tokens: TOKENS,
});

Deno.test("refreshEntry: the new tokens in their stored form; the refresh token, the client and the resource are sent", async () => {
  await using server = authorizationServer(() =>
    Response.json({
      access_token: "new",
      token_type: "Bearer",
      refresh_token: "r2",
      expires_in: 600,
    })
  );
  const issuer = `http://127.0.0.1:${server.port}`;
  const fresh = await refreshEntry(
    entryOf(issuer),
    "r1",
    { client_id: "c1" },
    new SignInHttp({ signal: AbortSignal.timeout(10_000) }),
    createLogger("t", "error", () => {}),
  );
  strictEqual(fresh?.accessToken, "new");
  strictEqual(fresh?.refreshToken, "r2");
  // The server named no scope: the scope asked before stays.
  strictEqual(fresh?.requestedScope, "read write");
  strictEqual(fresh?.scope, "read write");
  ok(fresh!.expiresAt! > Date.now() + 500_000);
  const [form] = server.forms;
  strictEqual(form!.get("grant_type"), "refresh_token");
  strictEqual(form!.get("refresh_token"), "r1");
  strictEqual(form!.get("client_id"), "c1");
  strictEqual(form!.get("resource"), "https://mcp.example/");
});

Deno.test("refreshEntry: a refused refresh is undefined with one warning (a new sign-in); no token in the log", async () => {
  await using server = authorizationServer(() =>
    Response.json({ error: "invalid_grant", error_description: "expired r1" }, { status: 400 })
  );
  const lines: string[] = [];
  const fresh = await refreshEntry(
    entryOf(`http://127.0.0.1:${server.port}`),
    "r1-s3cret",
    { client_id: "c1" },
    new SignInHttp({ signal: AbortSignal.timeout(10_000) }),
    createLogger("t", "info", (line) => lines.push(line)),
  );
  strictEqual(fresh, undefined);
  strictEqual(lines.length, 1, lines.join(""));
  ok(lines[0]!.includes("a new sign-in is needed"), lines[0]);
  ok(!lines[0]!.includes("s3cret"), lines[0]);
});

Deno.test("refreshEntry: the end of the sign-in's time limit is thrown as sign_in_timeout, not undefined (the caller keeps the tokens)", async () => {
  await using server = authorizationServer(() => new Response(new ReadableStream()));
  const refreshing = refreshEntry(
    entryOf(`http://127.0.0.1:${server.port}`),
    "r1",
    { client_id: "c1" },
    new SignInHttp({ signal: AbortSignal.timeout(200) }),
    createLogger("t", "error", () => {}),
  );
  await rejects(refreshing, (error: { signIn?: { cause?: string } }) => {
    strictEqual(error.signIn?.cause, "sign_in_timeout");
    return true;
  });
});
