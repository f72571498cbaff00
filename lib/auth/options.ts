/**
 * The sign-in options of the command line (`cli/` parses them): their
 * checks and the token source they make. A value that is not valid is an
 * `AuthOptionError` (exit 2), and so is a token store that does not open
 * (a `StoreOpenError`, outside VS Code's sandbox).
 *
 * @module
 */

import type { FetchLike } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import type { SignIn } from "./sign_in.ts";
import type { TokenStore } from "./store.ts";

/**
 * The names of the sign-in options that {@linkcode readAuthOptions} reads
 * (the table of `cli/flags.ts` gives their kinds and help; a test checks
 * that the two agree).
 */
export const SIGN_IN_OPTIONS = [
  "sign-in-timeout",
  "redirect-port",
  "no-browser",
  "client-id",
  "client-issuer",
  "client-secret-env",
  "client-metadata-url",
  "token-store",
] as const;

/** A sign-in option that is not valid; the message is one line and names no value of a secret. */
export class AuthOptionError extends Error {
  override name = "AuthOptionError";
}

/**
 * A token store that does not open (exit 2): not an error of the arguments,
 * so it ends without the pointer to `--help`.
 */
export class StoreOpenError extends AuthOptionError {
  override name = "StoreOpenError";
}

/** The sign-in options as the command line gave them. */
export interface AuthSettings {
  readonly signInTimeoutMs: number;
  readonly redirectPort?: number;
  readonly noBrowser: boolean;
  readonly clientId?: string;
  readonly clientIssuer?: string;
  readonly clientSecretEnv?: string;
  readonly clientMetadataUrl?: string;
  readonly tokenStore?: string;
}

/**
 * The sign-in options of a command line: undefined without a URL upstream
 * (where a sign-in option is not valid), and undefined when `--header-env`
 * gives the `Authorization` header itself: then the user signs in, not the
 * bridge.
 */
export function authSettingsOf(
  values: Record<string, unknown>,
  remote: { readonly headers: readonly (readonly [string, string])[] } | undefined,
): AuthSettings | undefined {
  const given = SIGN_IN_OPTIONS.find((name) => values[name] !== undefined);
  if (remote === undefined) {
    if (given !== undefined) {
      throw new AuthOptionError(`--${given} needs an upstream server at a URL`);
    }
    return undefined;
  }
  if (remote.headers.some(([name]) => name.toLowerCase() === "authorization")) {
    if (given !== undefined) {
      throw new AuthOptionError(
        `--${given} does not go with an Authorization header of --header-env`,
      );
    }
    return undefined;
  }
  return readAuthOptions(values);
}

/**
 * The time limit of server/discover with a sign-in: when the store has no
 * access token valid for more than a minute, a sign-in can happen during
 * initialize, and the limit is --discover-timeout and --sign-in-timeout together.
 */
export async function discoverLimitMs(
  discoverMs: number,
  source: SignIn,
  settings: AuthSettings,
): Promise<number> {
  return await source.hasUsableToken() ? discoverMs : discoverMs + settings.signInTimeoutMs;
}

/** The default time limit of a sign-in. */
export const DEFAULT_SIGN_IN_TIMEOUT_MS = 300_000;

function text(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") {
    throw new AuthOptionError(`--${name} needs a value`);
  }
  return value;
}

/**
 * Checks the sign-in options of `parseArgs` values.
 */
export function readAuthOptions(values: Record<string, unknown>): AuthSettings {
  const timeout = text(values, "sign-in-timeout");
  let signInTimeoutMs = DEFAULT_SIGN_IN_TIMEOUT_MS;
  if (timeout !== undefined) {
    const seconds = Number(timeout);
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new AuthOptionError("--sign-in-timeout needs a positive number");
    }
    signInTimeoutMs = Math.round(seconds * 1000);
  }
  const port = text(values, "redirect-port");
  let redirectPort: number | undefined;
  if (port !== undefined) {
    redirectPort = Number(port);
    if (!/^\d+$/.test(port) || redirectPort < 1 || redirectPort > 65535) {
      throw new AuthOptionError("--redirect-port needs a port from 1 to 65535");
    }
  }
  const clientId = text(values, "client-id");
  const clientIssuer = text(values, "client-issuer");
  const clientSecretEnv = text(values, "client-secret-env");
  const clientMetadataUrl = text(values, "client-metadata-url");
  const tokenStore = text(values, "token-store");
  if ((clientId === undefined) !== (clientIssuer === undefined)) {
    throw new AuthOptionError("--client-id and --client-issuer go together");
  }
  if (clientIssuer !== undefined && !URL.canParse(clientIssuer)) {
    throw new AuthOptionError("--client-issuer needs a URL");
  }
  if (clientSecretEnv !== undefined && clientId === undefined) {
    throw new AuthOptionError("--client-secret-env needs --client-id");
  }
  return {
    signInTimeoutMs,
    noBrowser: values["no-browser"] === true,
    ...(redirectPort !== undefined && { redirectPort }),
    ...(clientId !== undefined && { clientId }),
    ...(clientIssuer !== undefined && { clientIssuer }),
    ...(clientSecretEnv !== undefined && { clientSecretEnv }),
    ...(clientMetadataUrl !== undefined && { clientMetadataUrl }),
    ...(tokenStore !== undefined && { tokenStore }),
  };
}

/**
 * The default redirect port of a server URL: stable across restarts (a
 * registered redirect URI keeps working) and spread over 20000-31999, below
 * the ephemeral ports of Linux, so two servers rarely share one.
 */
export async function defaultRedirectPort(serverUrl: string): Promise<number> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(new URL(serverUrl).href)),
  );
  return 20_000 + ((digest[0]! << 8 | digest[1]!) % 12_000);
}

/** Opens the token store of the settings; a `StoreOpenError` when it does not open. */
export async function openStore(
  settings: Pick<AuthSettings, "tokenStore">,
  env: (name: string) => string | undefined,
): Promise<TokenStore> {
  // The store (and node:path) loads only for a command line that has one.
  const { defaultStoreDir, StoreError, TokenStore } = await import("./store.ts");
  try {
    return await TokenStore.open(settings.tokenStore ?? defaultStoreDir(env));
  } catch (error) {
    if (error instanceof StoreError) throw new StoreOpenError(error.message);
    throw error;
  }
}

/**
 * The name of the executable for the messages: the compiled binary's own
 * name, or `mcp-bridge-vscode` under `deno run`.
 */
export function executableName(): string {
  try {
    const base = Deno.execPath().split(/[\\/]/).pop()!.replace(/\.exe$/i, "");
    return base === "deno" || base === "" ? "mcp-bridge-vscode" : base;
  } catch {
    return "mcp-bridge-vscode";
  }
}

/** What the token source of a URL needs from `main.ts`. */
export interface SignInContext {
  readonly logger: Logger;
  /** The name of the executable, for the messages (`mcp-bridge-vscode`). */
  readonly name: string;
  readonly env?: (name: string) => string | undefined;
  /**
   * The fetch under every request of the sign-in: the link's HTTP client
   * (its CA certificates, its proxies). Without it, a fetch with `caCerts`.
   */
  readonly fetch?: FetchLike;
  /** The PEM text of `--ca-file`, for the sign-in's own HTTP client when `fetch` is not given. */
  readonly caCerts?: readonly string[];
}

/**
 * The token source of an upstream server at `serverUrl`. Outside VS Code's
 * sandbox it opens the store now, so that a store that does not open is exit
 * 2 before the bridge starts. Under `SANDBOX_RUNTIME=1` it opens nothing: a
 * server that needs no sign-in, or whose stored token is only read, runs
 * with a store that the sandbox does not let it write.
 */
export async function createSignIn(
  settings: AuthSettings,
  serverUrl: string,
  context: SignInContext,
): Promise<SignIn> {
  const env = context.env ?? ((name: string) => Deno.env.get(name));
  let clientSecret: string | undefined;
  if (settings.clientSecretEnv !== undefined) {
    clientSecret = env(settings.clientSecretEnv);
    if (clientSecret === undefined) {
      throw new AuthOptionError(
        `the variable ${settings.clientSecretEnv} of --client-secret-env is not set`,
      );
    }
  }
  const sandbox = env("SANDBOX_RUNTIME") === "1";
  // The sign-in, its store, its browser and the SDK's OAuth code load only for
  // an upstream that signs in: memory and start-up that a bridge in front of
  // a command never needs.
  const [{ SignIn }, { defaultStoreDir, TokenStore }, { systemBrowser }, { signInFetch }] =
    await Promise.all([
      import("./sign_in.ts"),
      import("./store.ts"),
      import("./browser.ts"),
      import("./sign_in_fetch.ts"),
    ]);
  const store = sandbox
    ? TokenStore.at(settings.tokenStore ?? defaultStoreDir(env))
    : await openStore(settings, env);
  const url = new URL(serverUrl).href;
  return new SignIn({
    serverUrl: url,
    store,
    redirectPort: settings.redirectPort ?? await defaultRedirectPort(url),
    signInTimeoutMs: settings.signInTimeoutMs,
    noBrowser: settings.noBrowser,
    sandbox,
    name: context.name,
    openBrowser: systemBrowser(env),
    logger: context.logger,
    fetch: context.fetch ?? signInFetch(context.caCerts),
    ...(settings.clientId !== undefined && { clientId: settings.clientId }),
    ...(settings.clientIssuer !== undefined && { clientIssuer: settings.clientIssuer }),
    ...(clientSecret !== undefined && { clientSecret }),
    ...(settings.clientMetadataUrl !== undefined &&
      { clientMetadataUrl: settings.clientMetadataUrl }),
  });
}
