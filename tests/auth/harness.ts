/**
 * The harness of the sign-in tests: a real provider and resource server, a
 * `SignIn` on a fresh store, the test browser in process, a fetch that
 * records every secret of the OAuth exchange (codes, verifiers, tokens) so
 * that the log can be scanned for them, and `call`, a small stand-in for
 * the HTTP link's use of the token source.
 *
 * @module
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { SignIn, type SignInSettings } from "../../lib/auth/sign_in.ts";
import { type LockTimes, TokenStore } from "../../lib/auth/store.ts";
import { type BrowserMode, type BrowserVisit, visit } from "../fixtures/auth/browser.ts";
import {
  type ProviderOptions,
  type RunningProvider,
  startProvider,
} from "../fixtures/auth/provider.ts";
import {
  type ResourcePolicy,
  type RunningResource,
  startResource,
} from "../fixtures/auth/resource.ts";
import { freePort } from "../free_port.ts";

/** A small poll time: a waiter sees a freed lock within 20 ms. */
export const FAST_LOCK: LockTimes = { pollMs: 20 };

/** Everything secret that crossed the wire, for the scan. */
export class Secrets {
  readonly values = new Set<string>();

  add(value: string | null | undefined): void {
    if (value && value.length >= 8) this.values.add(value);
  }

  /** The secrets found in `text`. */
  foundIn(text: string): string[] {
    return [...this.values].filter((secret) => text.includes(secret));
  }
}

/** A fetch that records the codes, verifiers and tokens it carries. */
export function recordingFetch(secrets: Secrets): typeof fetch {
  return async (input, init) => {
    if (init?.body instanceof URLSearchParams || typeof init?.body === "string") {
      const params = new URLSearchParams(init.body.toString());
      for (const name of ["code", "code_verifier", "refresh_token", "token", "client_secret"]) {
        secrets.add(params.get(name));
      }
    }
    const response = await fetch(input, init);
    if ((response.headers.get("content-type") ?? "").includes("json")) {
      const text = await response.clone().text();
      try {
        const value = JSON.parse(text) as Record<string, unknown>;
        for (const name of ["access_token", "refresh_token", "client_secret"]) {
          if (typeof value[name] === "string") secrets.add(value[name] as string);
        }
      } catch {
        // Not JSON after all.
      }
    }
    return response;
  };
}

/** Options of {@linkcode setup}. */
export interface SetupOptions {
  provider?: ProviderOptions;
  policy?: Partial<ResourcePolicy>;
  mode?: BrowserMode;
  settings?: Partial<SignInSettings>;
  /** Another bridge on the same store and servers. */
  share?: World;
}

/** One test's servers, store and token source. */
export interface World {
  readonly provider: RunningProvider;
  readonly resource: RunningResource;
  readonly dir: string;
  readonly store: TokenStore;
  readonly source: SignIn;
  readonly log: string[];
  readonly opened: string[];
  readonly visits: Promise<BrowserVisit>[];
  readonly secrets: Secrets;
  mode: BrowserMode;
  readonly port: number;
  /** A new token source on the same store (a restart, or a second bridge). */
  again(settings?: Partial<SignInSettings>): World;
  close(): Promise<void>;
}

/** Starts the servers and a token source. */
export async function setup(options: SetupOptions = {}): Promise<World> {
  const provider = options.share?.provider ?? await startProvider(options.provider);
  const resource = options.share?.resource ??
    startResource(provider.issuer, undefined, options.policy);
  const dir = options.share?.dir ?? await Deno.makeTempDir({ prefix: "auth-test-" });
  const store = await TokenStore.open(`${dir}/store`, FAST_LOCK);
  const secrets = options.share?.secrets ?? new Secrets();
  const port = options.share?.port ?? freePort();
  const make = (settings: Partial<SignInSettings> = {}): World => {
    const log: string[] = [];
    const opened: string[] = [];
    const visits: Promise<BrowserVisit>[] = [];
    const world: World = {
      provider,
      resource,
      dir,
      store,
      log,
      opened,
      visits,
      secrets,
      port,
      mode: options.mode ?? "login",
      source: undefined as unknown as SignIn,
      again: (more) => make({ ...options.settings, ...more }),
      close: async () => {
        await Promise.allSettled(visits);
        await resource.close();
        await provider.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
    (world as { source: SignIn }).source = new SignIn({
      serverUrl: resource.url,
      store,
      redirectPort: port,
      signInTimeoutMs: 20_000,
      noBrowser: false,
      sandbox: false,
      name: "mcp-bridge-vscode",
      logger: createLogger("test", "debug", (line) => log.push(line)),
      fetch: recordingFetch(secrets),
      openBrowser: (url) => {
        opened.push(url);
        visits.push(visit(url, world.mode));
        return Promise.resolve(true);
      },
      ...settings,
    });
    return world;
  };
  return make(options.settings);
}

/**
 * Sends one request the way the HTTP link does: the token source's header,
 * and on a 401 or 403 its challenge, then the request again.
 */
export async function call(
  world: Pick<World, "source" | "resource">,
  body = "{}",
  signal: AbortSignal = AbortSignal.timeout(30_000),
): Promise<Response> {
  for (let attempt = 1;; attempt++) {
    const authorization = await world.source.authorization(signal);
    const response = await fetch(world.resource.url, {
      method: "POST",
      body,
      headers: authorization === undefined ? {} : { authorization },
      signal,
    });
    if (response.status !== 401 && response.status !== 403) return response;
    await response.body?.cancel();
    await world.source.challenge(
      {
        status: response.status,
        wwwAuthenticate: response.headers.get("www-authenticate") ?? undefined,
      },
      attempt,
      signal,
    );
  }
}

/** The secrets (and the URL path of the server) that `text` shows. */
export function leaks(world: World, text: string): string[] {
  const found = world.secrets.foundIn(text);
  for (const token of world.resource.tokensSeen) if (text.includes(token)) found.push(token);
  if (text.includes(world.resource.secretPath)) found.push("the URL path of the server");
  return found;
}

/** Rejects with the sign-in failure of `cause`; returns it. */
export async function failsWith(
  promise: Promise<unknown>,
  cause: string,
): Promise<UpstreamFailure> {
  let caught: unknown;
  await rejects(promise, (error) => {
    caught = error;
    return true;
  });
  ok(caught instanceof UpstreamFailure, `not an UpstreamFailure: ${caught}`);
  strictEqual(caught.kind, "sign_in");
  strictEqual(caught.signIn?.cause, cause);
  return caught;
}

/** The log and the browser pages hold none of the secrets of the exchange. */
export async function noLeaks(world: World): Promise<void> {
  const text = world.log.join("");
  deepStrictEqual(leaks(world, text), []);
  // The browser pages must not show them either.
  for (const visit of await Promise.all(world.visits)) {
    deepStrictEqual(leaks(world, visit.text), []);
  }
}
