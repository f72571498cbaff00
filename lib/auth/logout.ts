/**
 * `mcp-bridge-vscode logout URL [--token-store DIR]`: removes the tokens and
 * the client registrations of one server from the store, and first revokes
 * the tokens (RFC 7009) where the authorization server offers revocation.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import { issuerMetadata } from "./discovery.ts";
import { signInFetch, SignInHttp } from "./sign_in_fetch.ts";
import type { FetchLike } from "@modelcontextprotocol/client";
import { isSignInFailure } from "./failures.ts";
import { openStore } from "./options.ts";
import type { ServerEntry } from "./store.ts";

/** What `logout` was asked. */
export interface LogoutCommand {
  readonly url: string;
  readonly tokenStore?: string;
}

/** The time limit of the requests of a logout. */
const LOGOUT_LIMIT_MS = 60_000;

async function revoke(entry: ServerEntry, log: Logger, fetchFn: FetchLike): Promise<void> {
  const { issuer, clientId, tokens } = entry;
  if (issuer === undefined || clientId === undefined || tokens === undefined) return;
  // The requests of the sign-in, with their limits; the whole logout waits one minute at most.
  const http = new SignInHttp({ fetch: fetchFn, signal: AbortSignal.timeout(LOGOUT_LIMIT_MS) });
  let endpoint: string | undefined;
  try {
    const metadata = await issuerMetadata(issuer, http) as { revocation_endpoint?: unknown };
    if (typeof metadata.revocation_endpoint === "string") endpoint = metadata.revocation_endpoint;
  } catch (error) {
    const detail = isSignInFailure(error) ? error.signIn?.detail : undefined;
    log.warn(`the authorization server cannot be reached (${detail ?? "the time limit passed"})`);
    return;
  }
  const step = http.step("revocation");
  if (endpoint === undefined) {
    log.info("the authorization server offers no revocation: the tokens are only forgotten");
    return;
  }
  const client = entry.clients.find((c) => c.client.client_id === clientId)?.client;
  const secret = typeof client?.client_secret === "string" ? client.client_secret : undefined;
  // The refresh token first: revoking it revokes the grant at most servers.
  const revocations: [string, string][] = [["refresh_token", tokens.refreshToken ?? ""], [
    "access_token",
    tokens.accessToken,
  ]];
  for (const [hint, token] of revocations) {
    if (token === "") continue;
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
    };
    if (secret !== undefined) {
      headers.authorization = `Basic ${
        btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)
      }`;
    } else {
      body.set("client_id", clientId);
    }
    try {
      const response = await step.fetch(endpoint, { method: "POST", headers, body });
      await response.body?.cancel();
      if (response.ok) log.info(`the ${hint.replace("_", " ")} is revoked`);
      else {log.warn(
          `the revocation of the ${hint.replace("_", " ")} failed: HTTP status ${response.status}`,
        );}
    } catch {
      log.warn(`the revocation of the ${hint.replace("_", " ")} failed (${step.detail()})`);
    }
  }
}

/**
 * Runs `logout`; resolves with the exit code. The store that does not open
 * is an `AuthOptionError` (exit 2).
 */
export async function runLogout(
  command: LogoutCommand,
  log: Logger,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
  fetchFn: FetchLike = signInFetch(undefined),
): Promise<number> {
  const store = await openStore(command, env);
  const entry = await store.read(command.url);
  await revoke(entry, log, fetchFn);
  const removed = await store.remove(command.url);
  log.info(
    removed
      ? "signed out: the tokens and the client of the server are removed"
      : "the store has no sign-in for this server",
  );
  return 0;
}
