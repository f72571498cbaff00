/**
 * `logout URL`, in process against an authorization server on 127.0.0.1:
 * the refresh token is revoked first, then the access token (RFC 7009), a
 * confidential client with HTTP Basic, a public client by its client_id; a
 * server without revocation or out of reach only forgets; the store entry
 * goes in every case, and no token reaches the log.
 * tests/process/sign_in_test.ts logs out of oidc-provider with the program.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { runLogout } from "../../lib/auth/logout.ts";
import { type ServerEntry, TokenStore } from "../../lib/auth/store.ts";
import { createLogger } from "../../lib/log.ts";
import { serveRaw } from "../fixtures/http_upstream.ts";

const SERVER = "https://mcp.example/mcp";
const NO_ENV = () => undefined;

interface Revocation {
  readonly form: URLSearchParams;
  readonly authorization: string | null;
}

/** An authorization server; `revocation: false` offers none; `status` answers each revocation. */
function authorizationServer(revocation = true, status = 200) {
  const revoked: Revocation[] = [];
  const server = serveRaw((request, body) => {
    const url = new URL(request.url);
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: url.origin,
        authorization_endpoint: `${url.origin}/authorize`,
        token_endpoint: `${url.origin}/token`,
        response_types_supported: ["code"],
        ...(revocation && { revocation_endpoint: `${url.origin}/revoke` }),
      });
    }
    if (url.pathname === "/revoke") {
      revoked.push({
        form: new URLSearchParams(body),
        authorization: request.headers.get("authorization"),
      });
      return new Response(null, { status });
    }
    return new Response(null, { status: 404 });
  }, "/");
  return Object.assign(server, { revoked });
}

/** A store in a new directory with `entry` (if any) for SERVER; the logout's log lines. */
async function logout(
  entry: ServerEntry | undefined,
): Promise<{ code: number; lines: string[]; after: ServerEntry }> {
  const dir = await Deno.makeTempDir({ prefix: "logout-test-" });
  try {
    const store = await TokenStore.open(`${dir}/store`);
    if (entry) await store.write(SERVER, entry);
    const lines: string[] = [];
    const code = await runLogout(
      { url: SERVER, tokenStore: `${dir}/store` },
      createLogger("t", "info", (line) => lines.push(line)),
      NO_ENV,
    );
    for (const line of lines) {
      for (const secret of ["at-s3cret", "rt-s3cret", "cs-s3cret"]) {
        ok(!line.includes(secret), line);
      }
    }
    return { code, lines, after: await store.read(SERVER) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const entryOf = (issuer: string, secret?: string): ServerEntry => ({
  issuer,
  clientId: "client 1",
  clients: [{
    issuer,
    redirectUri: "http://127.0.0.1:1/callback",
    client: { client_id: "client 1", ...(secret && { client_secret: secret }) },
  }],
  tokens: { accessToken: "at-s3cret", tokenType: "Bearer", refreshToken: "rt-s3cret" },
});

Deno.test("logout: a public client revokes the refresh token, then the access token, by its client_id; the entry goes", async () => {
  await using as = authorizationServer();
  const { code, lines, after } = await logout(entryOf(`http://127.0.0.1:${as.port}`));
  strictEqual(code, 0);
  deepStrictEqual(as.revoked.map((r) => [r.form.get("token_type_hint"), r.form.get("token")]), [
    ["refresh_token", "rt-s3cret"],
    ["access_token", "at-s3cret"],
  ]);
  ok(as.revoked.every((r) => r.form.get("client_id") === "client 1" && r.authorization === null));
  deepStrictEqual(after, { clients: [] });
  strictEqual(lines.filter((l) => l.includes("is revoked")).length, 2, lines.join(""));
  ok(lines.at(-1)!.includes("signed out: the tokens and the client of the server are removed"));
});

Deno.test("logout: a confidential client authenticates with HTTP Basic (form-encoded), not in the body", async () => {
  await using as = authorizationServer();
  await logout(entryOf(`http://127.0.0.1:${as.port}`, "cs-s3cret"));
  strictEqual(as.revoked.length, 2);
  for (const r of as.revoked) {
    strictEqual(r.form.get("client_id"), null);
    strictEqual(r.authorization, `Basic ${btoa("client%201:cs-s3cret")}`);
  }
});

Deno.test("logout: no revocation endpoint, a refused revocation or a server out of reach: the tokens are forgotten all the same", async () => {
  await using none = authorizationServer(false);
  const forgotten = await logout(entryOf(`http://127.0.0.1:${none.port}`));
  ok(
    forgotten.lines.some((l) => l.includes("offers no revocation: the tokens are only forgotten")),
  );
  deepStrictEqual(forgotten.after, { clients: [] });

  await using refusing = authorizationServer(true, 503);
  const refused = await logout(entryOf(`http://127.0.0.1:${refusing.port}`));
  ok(
    refused.lines.some((l) =>
      l.includes("the revocation of the refresh token failed: HTTP status 503")
    ),
  );
  deepStrictEqual(refused.after, { clients: [] });

  const gone = authorizationServer();
  const port = gone.port;
  await gone.close();
  const unreachable = await logout(entryOf(`http://127.0.0.1:${port}`));
  strictEqual(unreachable.code, 0);
  ok(
    unreachable.lines.some((l) => l.includes("the authorization server cannot be reached")),
    unreachable.lines.join(""),
  );
  deepStrictEqual(unreachable.after, { clients: [] });
});

Deno.test("logout: a store without a sign-in for the server says so", async () => {
  const { code, lines } = await logout(undefined);
  strictEqual(code, 0);
  deepStrictEqual(lines.length, 1, lines.join(""));
  ok(lines[0]!.includes("the store has no sign-in for this server"), lines[0]);
});
