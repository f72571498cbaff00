/**
 * `mcp-bridge-vscode login URL [sign-in options]`: a sign-in from a
 * terminal (the browser, or `--no-browser` and the start URL on stderr) that
 * fills the token store. It also reads the redirect address that the user
 * pastes on stdin, and with `--no-browser` it prints the authorization URL
 * for a browser on another machine (`paste.ts`). A bridge in VS Code's
 * sandbox (`SANDBOX_RUNTIME=1`) then uses and refreshes the stored tokens
 * without a browser. It takes the
 * command line of the bridge (the sign-in options and the HTTP flags of a
 * URL; `cli/command_line.ts` parses it), so that it signs in with the same
 * redirect port, client and store.
 *
 * @module
 */

import { extractWWWAuthenticateParams, type FetchLike } from "@modelcontextprotocol/client";
import type { Logger } from "../log.ts";
import { mapUpstreamFailure } from "../errors/failures.ts";
import type { RemoteTarget } from "../upstream/http_options.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { type AuthSettings, createSignIn, executableName } from "./options.ts";
import { signInFetch, SignInHttp } from "./sign_in_fetch.ts";

/**
 * The terminal of `login`: the lines that the user pastes, and where the
 * authorization URL goes. Without it, `login` reads no paste.
 */
export interface LoginTerminal {
  /** Opens the pasted lines (stdin), when the sign-in waits for the redirect. */
  readonly input: () => ReadableStream<Uint8Array>;
  /** Writes to the terminal (stderr, as the log). */
  readonly write: (text: string) => void;
}

/** What `login` was asked. */
export interface LoginCommand {
  readonly remote: RemoteTarget;
  readonly auth: AuthSettings;
}

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
  terminal?: LoginTerminal,
): Promise<number> {
  const fetchFn = signInFetch(command.remote.caCerts);
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
    const paste = terminal && {
      open: terminal.input,
      write: terminal.write,
      showUrl: command.auth.noBrowser,
    };
    await source.signInNow(await challengeOf(command.remote, fetchFn, limit), limit, paste);
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
