/**
 * `mcp-bridge-vscode login URL [sign-in options]`: a sign-in from a
 * terminal (the browser, or `--no-browser` and the start URL on stderr) that
 * fills the token store. A bridge in VS Code's sandbox (`SANDBOX_RUNTIME=1`)
 * then uses and refreshes the stored tokens without a browser. It takes the
 * command line of the bridge (the sign-in options and the HTTP flags of a
 * URL), so that it signs in with the same redirect port, client and store.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { extractWWWAuthenticateParams, type FetchLike } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import { mapUpstreamFailure } from "../bridge/failures.ts";
import {
  HTTP_FLAGS,
  parseRemote,
  RemoteArgumentError,
  type RemoteTarget,
} from "../upstream/http_options.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { usageReason } from "../usage.ts";
import {
  AUTH_OPTIONS,
  AuthOptionError,
  type AuthSettings,
  authSettingsOf,
  createSignIn,
  executableName,
} from "./options.ts";
import { linkFetch, SignInHttp } from "./sign_in_fetch.ts";

/** What `login` was asked. */
export interface LoginCommand {
  readonly remote: RemoteTarget;
  readonly auth: AuthSettings;
}

/**
 * Parses the arguments after `login`: one URL, the sign-in options and the
 * HTTP flags of a URL upstream.
 *
 * @example
 * ```ts
 * import { parseLogin } from "./login.ts";
 * const command = parseLogin(["https://mcp.example/mcp", "--no-browser"]);
 * if (!command.auth.noBrowser || command.remote.url.host !== "mcp.example") throw new Error();
 * ```
 */
export function parseLogin(
  argv: readonly string[],
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): LoginCommand {
  const options = { ...AUTH_OPTIONS, ...HTTP_FLAGS } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new AuthOptionError(usageReason(error, argv, options));
  }
  const [url, ...rest] = parsed.positionals;
  if (url === undefined || !URL.canParse(url)) {
    throw new AuthOptionError("login needs the URL of the server");
  }
  if (rest.length > 0) throw new AuthOptionError("login takes one URL");
  let remote: RemoteTarget;
  try {
    remote = parseRemote(url, parsed.values, { env });
  } catch (error) {
    if (error instanceof RemoteArgumentError) throw new AuthOptionError(error.message);
    throw error;
  }
  const auth = authSettingsOf(parsed.values, remote);
  if (auth === undefined) {
    throw new AuthOptionError(
      "login does not go with an Authorization header of --header-env: the bridge does not sign in then",
    );
  }
  return { remote, auth };
}

/** A request that a server needs no sign-in for answers it; any other gets a challenge. */
const PROBE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

/**
 * What the server answers a request without a token: the `scope` and the
 * `resource_metadata` of its challenge, or nothing (then discovery uses the
 * well-known paths). A request of the sign-in, with its limits.
 */
async function challengeOf(
  remote: RemoteTarget,
  fetchFn: FetchLike,
  signal: AbortSignal,
): Promise<{ scope?: string; resourceMetadataUrl?: URL }> {
  const step = new SignInHttp({ fetch: fetchFn, signal }).step("protected resource metadata");
  try {
    const response = await step.fetch(remote.url, {
      method: "POST",
      headers: [
        ...remote.headers.map(([name, value]) => [name, value] as [string, string]),
        ["content-type", "application/json"],
        ["accept", "application/json, text/event-stream"],
      ],
      body: PROBE,
    });
    await response.body?.cancel().catch(() => {});
    if (response.status !== 401 && response.status !== 403) return {};
    const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(response);
    return {
      ...(scope !== undefined && { scope }),
      ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }),
    };
  } catch {
    return {};
  }
}

/**
 * Runs `login`: resolves with the exit code, 0 when the store holds the new
 * tokens, 1 with one line on stderr when the sign-in failed.
 */
export async function runLogin(
  command: LoginCommand,
  log: Logger,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<number> {
  const fetchFn = linkFetch(command.remote.caCerts);
  // The terminal is outside VS Code's sandbox: login is the way out of it.
  const outside = (name: string) => name === "SANDBOX_RUNTIME" ? undefined : env(name);
  const source = await createSignIn(command.auth, command.remote.url.href, {
    logger: log,
    name: executableName(),
    env: outside,
    fetch: fetchFn,
  });
  const limit = AbortSignal.timeout(command.auth.signInTimeoutMs);
  try {
    await source.signInNow(await challengeOf(command.remote, fetchFn, limit), limit);
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    const failure = mapUpstreamFailure(error, "login", "");
    const detail = (failure.data as { detail?: unknown } | undefined)?.detail;
    log.error(
      `login failed: ${failure.message}${typeof detail === "string" ? ` (${detail})` : ""}`,
    );
    return 1;
  }
  log.info(
    "the tokens are stored: a bridge of this URL with the same sign-in options uses them",
  );
  return 0;
}

/**
 * The `login` subcommand for `main.ts`: its exit code, or undefined when
 * `argv` is not `login ...`. Invalid arguments and a store that does not
 * open are exit 2, with the reason and `usage` on stderr.
 */
export async function loginMain(
  argv: readonly string[],
  log: Logger,
  usage: string,
): Promise<number | undefined> {
  if (argv[0] !== "login") return undefined;
  try {
    return await runLogin(parseLogin(argv.slice(1)), log);
  } catch (error) {
    if (!(error instanceof AuthOptionError)) throw error;
    log.error(error.message);
    try {
      Deno.stderr.writeSync(new TextEncoder().encode(usage));
    } catch {
      // stderr is closed.
    }
    return 2;
  }
}
