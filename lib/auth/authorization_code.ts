/**
 * The authorization code flow of one sign-in (OAuth 2.1): the client (given,
 * stored or registered), the authorization request with PKCE S256, `state`
 * and `resource`, the one-time start URL for the user (the client's URL
 * prompt, else the browser), the redirect with the `iss` check, and the
 * token request. The tokens go to the store. `sign_in.ts` runs it under the
 * lock of the store, after the discovery and with the redirect listener open.
 *
 * @module
 */

import {
  exchangeAuthorization,
  IssuerMismatchError,
  startAuthorization,
} from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import { randomToken } from "../random_token.ts";
import type { UrlPrompt } from "../upstream/link.ts";
import type { OpenBrowser } from "./browser.ts";
import { authorizationUrlIsValid } from "./checks.ts";
import type { ServerInfo } from "./discovery.ts";
import { isSignInFailure, signInFailure } from "./failures.ts";
import { type PasteInput, type Pasting, readPastes } from "./paste.ts";
import { pageReason, type RedirectListener } from "./redirect.ts";
import { chooseClient, type ClientSettings } from "./registration.ts";
import type { SignInHttp } from "./sign_in_fetch.ts";
import type { ServerEntry, TokenStore } from "./store.ts";
import { toStored } from "./token_life.ts";

/** What the flow takes of the settings of the sign-in. */
export interface AuthorizationSettings extends ClientSettings {
  /** The URL of the upstream server (a secret: it is never logged). */
  readonly serverUrl: string;
  readonly store: TokenStore;
  /** `--no-browser`: without a URL prompt of the client, the log line alone shows the URL. */
  readonly noBrowser: boolean;
  readonly openBrowser: OpenBrowser;
}

/** One authorization: the server, the scope to ask for, and the ways to the user. */
export interface Authorization {
  readonly settings: AuthorizationSettings;
  /** The discovered authorization server and the resource. */
  readonly info: ServerInfo;
  readonly scope: string | undefined;
  /** The entry of the store for the server, as read under the lock. */
  readonly entry: ServerEntry;
  /** The open redirect listener, which the caller closes. */
  readonly listener: RedirectListener;
  /** The requests of this sign-in, stopped with it. */
  readonly http: SignInHttp;
  /** The client's URL prompt at the time the start URL goes out, if it has one. */
  readonly prompt: () => UrlPrompt | undefined;
  /** `login`: the redirect address can also be pasted on its stdin (`paste.ts`). */
  readonly paste?: PasteInput;
  readonly log: Logger;
}

/**
 * Runs the authorization code flow to its end: the new tokens are in the
 * store (with a new registration, stored at once), and the browser's page
 * says how it ended. It throws the failure of the sign-in; when `signal`
 * aborts (the time limit of the sign-in), it throws the signal's reason or
 * a `sign_in_timeout` failure, whose placeholders the caller fills.
 */
export async function authorize(authorization: Authorization, signal: AbortSignal): Promise<void> {
  const { settings, info, scope, entry, listener, http, log } = authorization;
  const { store, serverUrl } = settings;
  const choice = await chooseClient(settings, info, listener.redirectUri, entry, http);
  let current: ServerEntry = entry;
  if (choice.registered !== undefined) {
    current = { ...current, clients: [...current.clients, choice.registered] };
    // Stored at once: a sign-in that fails later reuses the registration.
    await store.write(serverUrl, current);
  }
  const state = randomToken(24); // 192 bits
  let started;
  try {
    started = await startAuthorization(info.authorizationServerUrl, {
      metadata: info.metadata,
      clientInformation: choice.client,
      redirectUrl: listener.redirectUri,
      state,
      resource: info.resource,
      ...(scope !== undefined && { scope }),
    });
  } catch {
    throw signInFailure("sign_in_invalid_url", "the authorization server supports no PKCE S256");
  }
  if (!authorizationUrlIsValid(started.authorizationUrl, state, listener.redirectUri)) {
    throw signInFailure("sign_in_invalid_url");
  }
  listener.arm(started.authorizationUrl.href, state);
  const onAbort = () =>
    listener.fail(signInFailure("sign_in_timeout"), "The time limit of the sign-in passed.");
  signal.addEventListener("abort", onAbort, { once: true });
  let pasting: Pasting | undefined;
  try {
    log.info(`sign-in needed: open ${listener.startUrl} in a browser to sign in`);
    if (authorization.paste !== undefined) {
      pasting = readPastes(authorization.paste, listener, started.authorizationUrl.href, log);
    }
    // The redirect can come before the client answers the prompt (it answers after the browser).
    const delivered = deliver(authorization, listener.startUrl, signal);
    delivered.catch(() => {});
    const redirect = await Promise.race([
      listener.redirect(),
      delivered.then(() => listener.redirect()),
    ]);
    // The redirect came (the browser's or a paste): no more pastes are read.
    await pasting?.stop();
    const step = http.step("token request");
    let tokens;
    try {
      tokens = await exchangeAuthorization(info.authorizationServerUrl, {
        metadata: info.metadata,
        clientInformation: choice.client,
        authorizationCode: redirect.code,
        ...(redirect.iss !== undefined && { iss: redirect.iss }),
        codeVerifier: started.codeVerifier,
        redirectUri: listener.redirectUri,
        resource: info.resource,
        fetchFn: step.fetch,
      });
    } catch (error) {
      if (isSignInFailure(error)) throw error;
      throw error instanceof IssuerMismatchError
        ? signInFailure("sign_in_failed", "the issuer of the redirect does not match")
        : step.failure();
    }
    await store.write(serverUrl, {
      ...current,
      issuer: info.metadata.issuer,
      clientId: choice.client.client_id,
      resource: info.resource,
      tokens: toStored(tokens, scope),
    });
    listener.finish({ ok: true });
    log.info("signed in to the upstream server");
  } catch (error) {
    listener.finish({ ok: false, reason: pageReason(error) });
    if (
      isSignInFailure(error, "sign_in_timeout") || (signal.aborted && !isSignInFailure(error))
    ) {
      // The placeholders are the caller's: the sign-in fills them.
      throw signal.reason ?? error;
    }
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort);
    await pasting?.stop();
  }
}

/** Sends the user to the start URL: the client's URL prompt, else the browser. */
async function deliver(
  authorization: Authorization,
  startUrl: string,
  signal: AbortSignal,
): Promise<void> {
  const prompt = authorization.prompt();
  if (prompt !== undefined) {
    let answer;
    try {
      answer = await prompt(startUrl, "Sign in to the upstream server in your browser.", signal);
    } catch {
      if (signal.aborted) throw signal.reason;
      throw signInFailure("reauthorization_required", "no_consent");
    }
    if (answer !== "accept") throw signInFailure("reauthorization_required", "declined");
    return;
  }
  const { settings, log } = authorization;
  if (settings.noBrowser) return;
  if (!await settings.openBrowser(startUrl)) {
    log.warn("the browser did not open: open the URL of the sign-in line by hand");
  }
}
