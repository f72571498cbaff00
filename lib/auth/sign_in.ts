/**
 * The sign-in of the bridge: the `TokenSource` of the HTTP link. It gives
 * each request the stored access token (refreshed when it expires within a
 * minute), and answers a 401 challenge with a sign-in and a 403
 * `insufficient_scope` with one step-up. A sign-in is OAuth 2.1 with PKCE
 * S256, `state`, `resource` and the `iss` check, through the one-time start
 * URL of the redirect listener (`authorization_code.ts`); parallel bridges
 * of one server share it through the lock of the store.
 *
 * @module
 */

import {
  computeScopeUnion,
  extractWWWAuthenticateParams,
  type FetchLike,
} from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import type { UrlPrompt } from "../upstream/link.ts";
import type { Challenge, ChallengeOutcome, TokenSource } from "../http/token_source.ts";
import { type AuthorizationSettings, authorize } from "./authorization_code.ts";
import { discover } from "./discovery.ts";
import { refreshEntry, storedClient } from "./refresh.ts";
import { SignInHttp } from "./sign_in_fetch.ts";
import { isSignInFailure, sandboxLine, signInFailure, timeoutFailure } from "./failures.ts";
import type { PasteInput } from "./paste.ts";
import { signInScope } from "./scope.ts";
import { RedirectListener } from "./redirect.ts";
import { usable } from "./token_life.ts";
import { type ServerEntry, type StoredTokens, StoreError } from "./store.ts";

/** What a sign-in needs. */
export interface SignInSettings extends AuthorizationSettings {
  readonly redirectPort: number;
  readonly signInTimeoutMs: number;
  /** SANDBOX_RUNTIME=1: a needed sign-in fails at once with `sandbox`. */
  readonly sandbox: boolean;
  /** The name of the executable, for the messages. */
  readonly name: string;
  readonly logger: Logger;
  /**
   * The fetch under the requests of the sign-in (`sign_in_fetch.ts` adds the
   * limits): the link's HTTP client settings, or the tests' recording fetch.
   */
  readonly fetch?: FetchLike;
}

interface SignInRequest {
  /** The scope of the challenge. */
  readonly challengeScope: string | undefined;
  readonly resourceMetadataUrl: URL | undefined;
  /** A step-up: ask for the scope of before and that of the challenge, with a new authorization. */
  readonly stepUp: boolean;
  /** The access token the upstream server refused, if any. */
  readonly refused: string | undefined;
  /** `login`: sign in even when the store has a usable token. */
  readonly force?: boolean;
  /** `login`: the redirect address can also be pasted on its stdin. */
  readonly paste?: PasteInput;
}

/** The token source of an upstream server at a URL. */
export class SignIn implements TokenSource {
  readonly #settings: SignInSettings;
  readonly #log: Logger;
  #prompt: UrlPrompt | undefined;
  #flight: Promise<void> | undefined;
  #refreshing: Promise<string | undefined> | undefined;
  #lastSent: string | undefined;
  /** The tokens of the store while they stay usable; a challenge forgets them. */
  #usable: StoredTokens | undefined;
  /** The store had no tokens at the last read, and no challenge came since. */
  #empty = false;
  #waiters: (() => void)[] = [];
  /**
   * The entry of a refresh that the store could not take (VS Code's sandbox
   * without the store in `allowWrite`): the tokens of this process, used
   * instead of the store's.
   */
  #kept: ServerEntry | undefined;

  constructor(settings: SignInSettings) {
    this.#settings = settings;
    this.#log = settings.logger;
  }

  /** The redirect URI of the sign-in. */
  get redirectUri(): string {
    return `http://127.0.0.1:${this.#settings.redirectPort}/callback`;
  }

  /** True when the store has an access token valid for more than a minute. */
  async hasUsableToken(): Promise<boolean> {
    const tokens = (await this.#read().catch(() => undefined))?.tokens;
    return tokens !== undefined && usable(tokens);
  }

  /** The entry of the server: the one kept in memory, else the store's. */
  #read(): Promise<ServerEntry> {
    return this.#kept !== undefined
      ? Promise.resolve(this.#kept)
      : this.#settings.store.read(this.#settings.serverUrl);
  }

  /**
   * Writes the entry of a refresh; where the store cannot be written, keeps
   * it in memory for this process, with one warn line that names the folder.
   */
  async #save(entry: ServerEntry, quiet = false): Promise<void> {
    try {
      await this.#settings.store.write(this.#settings.serverUrl, entry);
      this.#kept = undefined;
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      if (this.#kept === undefined && !quiet) this.#log.warn(keptLine(this.#settings));
      this.#kept = entry;
    }
  }

  /**
   * Runs `work` under the lock of the store; where the store cannot be
   * written (no lock file can be made), without it: a refresh of this
   * process alone.
   */
  async #lockedIfPossible<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    let started = false;
    try {
      return await this.#settings.store.withLock(this.#settings.serverUrl, signal, () => {
        started = true;
        return work();
      });
    } catch (error) {
      if (started || !(error instanceof StoreError)) throw error;
      return await work();
    }
  }

  async authorization(signal: AbortSignal): Promise<string | undefined> {
    // A token that stays usable for more than the refresh margin is used as it
    // is, without a read of the store for each request; a challenge forgets it.
    const known = this.#usable;
    if (known !== undefined && usable(known)) {
      this.#lastSent = known.accessToken;
      return `Bearer ${known.accessToken}`;
    }
    this.#usable = undefined;
    // A server that needs no sign-in never challenges: its requests go without a token, and
    // without a read of the empty store each time. Another bridge's sign-in shows at the next
    // challenge, which reads the store again.
    if (this.#empty) return (this.#lastSent = undefined);
    let entry: ServerEntry;
    try {
      entry = await this.#read();
    } catch (error) {
      // A store that cannot be read has no token for this request: a challenge says more.
      if (!(error instanceof StoreError)) throw error;
      this.#log.debug(error.message);
      entry = { clients: [] };
    }
    const tokens = entry.tokens;
    this.#empty = tokens === undefined;
    let access: string | undefined;
    if (tokens !== undefined && usable(tokens)) {
      access = tokens.accessToken;
      this.#usable = tokens;
    } else if (tokens?.refreshToken !== undefined) access = await this.#refresh(tokens, signal);
    this.#lastSent = access;
    return access === undefined ? undefined : `Bearer ${access}`;
  }

  async challenge(
    challenge: Challenge,
    attempt: number,
    signal: AbortSignal,
  ): Promise<ChallengeOutcome> {
    this.#usable = undefined;
    this.#empty = false;
    const params = extractWWWAuthenticateParams(
      new Response(null, {
        status: challenge.status,
        headers: challenge.wwwAuthenticate === undefined
          ? {}
          : { "www-authenticate": challenge.wwwAuthenticate },
      }),
    );
    const refused = (): never => {
      throw signInFailure(
        "access_refused",
        `HTTP status ${challenge.status}`,
        undefined,
        challenge.status,
      );
    };
    const stepUp = challenge.status === 403;
    if (stepUp && params.error !== "insufficient_scope") refused();
    // One sign-in (or step-up) per request: a second challenge means no sign-in helps.
    if (attempt > 1) refused();
    await this.#signIn({
      challengeScope: params.scope,
      resourceMetadataUrl: params.resourceMetadataUrl,
      stepUp,
      refused: this.#lastSent,
    }, signal);
    return "retry";
  }

  /**
   * `login`: a new sign-in now, whatever the store holds; `challenge` is what
   * an unauthenticated request to the server answered, if anything; `paste`,
   * where the user can paste the redirect address too.
   */
  async signInNow(
    challenge: { readonly scope?: string; readonly resourceMetadataUrl?: URL },
    signal: AbortSignal,
    paste?: PasteInput,
  ): Promise<void> {
    await this.#signIn({
      challengeScope: challenge.scope,
      resourceMetadataUrl: challenge.resourceMetadataUrl,
      stepUp: false,
      refused: undefined,
      force: true,
      ...(paste !== undefined && { paste }),
    }, signal);
  }

  setUrlPrompt(prompt: UrlPrompt | undefined): void {
    this.#prompt = prompt;
  }

  nextSignIn(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #signedIn(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Refreshes under the lock; undefined when the refresh failed (a sign-in follows). */
  #refresh(stale: StoredTokens, request: AbortSignal): Promise<string | undefined> {
    // --sign-in-timeout bounds the refresh too: a token endpoint that hangs stops no request longer.
    const signal = AbortSignal.any([request, AbortSignal.timeout(this.#settings.signInTimeoutMs)]);
    this.#refreshing ??= this.#lockedIfPossible(
      signal,
      async () => {
        const entry = await this.#read();
        // Another bridge refreshed first: its rotation made our refresh token void.
        if (
          entry.tokens && usable(entry.tokens) && entry.tokens.accessToken !== stale.accessToken
        ) {
          return entry.tokens.accessToken;
        }
        const tokens = entry.tokens;
        const client = storedClient(this.#settings, entry, this.redirectUri);
        if (tokens?.refreshToken === undefined || entry.issuer === undefined || !client) {
          return undefined;
        }
        const fresh = await refreshEntry(
          { ...entry, issuer: entry.issuer, tokens },
          tokens.refreshToken,
          client,
          this.#http(signal),
          this.#log,
        );
        if (fresh === undefined) {
          const { tokens: _dropped, ...rest } = entry;
          await this.#save(rest, true);
          return undefined;
        }
        await this.#save({ ...entry, tokens: fresh });
        this.#log.info("the access token of the upstream server was refreshed");
        this.#signedIn();
        return fresh.accessToken;
      },
    ).catch((error: unknown) => {
      if (
        isSignInFailure(error, "sign_in_timeout") || (signal.aborted && !isSignInFailure(error))
      ) {
        throw timeoutFailure(this.#settings.signInTimeoutMs, this.#settings.name);
      }
      throw error;
    }).finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  /** The requests of one sign-in or refresh, stopped by `signal`. */
  #http(signal: AbortSignal): SignInHttp {
    return new SignInHttp({
      signal,
      ...(this.#settings.fetch !== undefined && { fetch: this.#settings.fetch }),
    });
  }

  async #signIn(request: SignInRequest, signal: AbortSignal): Promise<void> {
    if (this.#settings.sandbox) {
      this.#log.warn(sandboxLine(this.#settings.name, this.#settings.serverUrl));
      throw signInFailure("sandbox");
    }
    if (this.#flight) {
      // One sign-in at a time in this bridge: the requests that wait share it.
      await this.#flight;
      return;
    }
    const limit = AbortSignal.timeout(this.#settings.signInTimeoutMs);
    const both = AbortSignal.any([signal, limit]);
    const flight = this.#settings.store.withLock(
      this.#settings.serverUrl,
      both,
      () => this.#underLock(request, both),
    ).catch((error: unknown) => {
      // Whatever step waited when the time limit passed (the lock, a request, the redirect).
      if (isSignInFailure(error, "sign_in_timeout") || (both.aborted && !isSignInFailure(error))) {
        throw timeoutFailure(this.#settings.signInTimeoutMs, this.#settings.name);
      }
      throw error;
    });
    this.#flight = flight.finally(() => this.#flight = undefined).catch(() => {});
    await flight;
  }

  async #underLock(request: SignInRequest, signal: AbortSignal): Promise<void> {
    const { store, serverUrl } = this.#settings;
    const entry = await store.read(serverUrl);
    // Another bridge signed in while this one waited for the lock.
    if (
      !request.force && entry.tokens !== undefined && usable(entry.tokens) &&
      entry.tokens.accessToken !== request.refused &&
      (!request.stepUp ||
        computeScopeUnion(entry.tokens.scope, request.challengeScope) === entry.tokens.scope)
    ) {
      this.#signedIn();
      return;
    }
    const http = this.#http(signal);
    const info = await discover(serverUrl, request.resourceMetadataUrl, http);
    const scope = signInScope(request.challengeScope, request.stepUp, entry, info);
    const listener = await RedirectListener.listen(this.#settings.redirectPort);
    try {
      await authorize({
        settings: this.#settings,
        info,
        scope,
        entry,
        listener,
        http,
        prompt: () => this.#prompt,
        ...(request.paste !== undefined && { paste: request.paste }),
        log: this.#log,
      }, signal);
    } finally {
      await listener.close();
    }
    this.#signedIn();
  }
}

/**
 * The warn line of refreshed tokens that the store cannot take: in VS Code's
 * sandbox, the folder to add to `allowWrite`.
 */
function keptLine(settings: SignInSettings): string {
  const dir = settings.store.dir;
  return settings.sandbox
    ? `the token store ${dir} cannot be written: the refreshed tokens are kept in memory until ` +
      `the server stops; add ${dir} to sandbox.filesystem.allowWrite in mcp.json to keep them`
    : `the token store ${dir} cannot be written: the refreshed tokens are kept in memory until ` +
      `the server stops`;
}
