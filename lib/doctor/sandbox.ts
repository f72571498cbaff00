/**
 * The sandbox part of `doctor` (SANDBOX_RUNTIME=1, as VS Code's sandbox
 * runtime sets it in a sandboxed server): the domains and the paths that the
 * top-level `sandbox` of `mcp.json` must allow, as a snippet of today's
 * shape (VS Code's reference, approved 2026-06-03): `"sandboxEnabled": true`
 * in the server's entry, and `sandbox` beside `servers`, whose rules every
 * sandboxed server of the file shares.
 *
 * No proxy host: inside the sandbox the proxy variables point to the
 * sandbox's own proxy. No read rule: the sandbox allows every read but
 * `denyRead` (the `--ca-file` too).
 *
 * @module
 */

import type { RemoteTarget } from "../upstream/http_options.ts";
import type { Report } from "./report.ts";
import type { SignInState } from "./sign_in_state.ts";

/** What the sandbox must allow. */
export interface SandboxNeeds {
  readonly domains: readonly string[];
  readonly writePaths: readonly string[];
}

/** The part of `mcp.json` that sandboxes the server: its entry's flag and the top-level rules. */
export interface SandboxSnippet {
  readonly servers: Readonly<Record<string, { readonly sandboxEnabled: true }>>;
  readonly sandbox: {
    readonly network: { readonly allowedDomains: readonly string[] };
    readonly filesystem: { readonly allowWrite: readonly string[] };
  };
}

/** The host of a URL text, or undefined. */
function hostOf(text: string | undefined): string | undefined {
  if (text === undefined || text === "") return undefined;
  try {
    return new URL(text).hostname;
  } catch {
    return undefined;
  }
}

/**
 * The domains and paths of the bridge in front of `remote` (or of a
 * command): the server's host and, once the store names it (after the first
 * sign-in), the host of its authorization server; the store's folder only
 * where the server signs in (`signsIn`: it asked for a sign-in, or the store
 * has its tokens), for the refreshes of the tokens.
 */
export function sandboxNeeds(
  remote: RemoteTarget | undefined,
  signIn: SignInState | undefined,
  signsIn: boolean,
): SandboxNeeds {
  const domains = new Set<string>();
  const writePaths: string[] = [];
  if (remote) domains.add(remote.url.hostname);
  if (remote && signIn && (signsIn || signIn.entry.tokens !== undefined)) {
    const issuer = hostOf(signIn.entry.issuer);
    if (issuer) domains.add(issuer);
    writePaths.push(signIn.storeDir);
  }
  return { domains: [...domains], writePaths };
}

/** The snippet of `mcp.json` for the server `name`. */
export function sandboxSnippet(name: string, needs: SandboxNeeds): SandboxSnippet {
  return {
    servers: { [name]: { sandboxEnabled: true } },
    sandbox: {
      network: { allowedDomains: [...needs.domains] },
      filesystem: { allowWrite: [...needs.writePaths] },
    },
  };
}

/**
 * Reports the sandbox's needs and the snippet, and what breaks in it: a
 * sign-in needs a browser and a redirect port, which the sandbox does not
 * have. Returns the snippet.
 */
export function checkSandbox(
  name: string,
  needs: SandboxNeeds,
  signIn: SignInState | undefined,
  signInNeeded: boolean,
  stdio: boolean,
  report: Report,
): SandboxSnippet {
  if (stdio) {
    report.add(
      "note",
      "SANDBOX_RUNTIME=1: the bridge needs no domain and no path of its own; the upstream command runs in the sandbox too, so allow what it reaches.",
    );
  } else {
    report.add(
      "note",
      `SANDBOX_RUNTIME=1: allow the domains ${
        needs.domains.join(", ")
      } (sandbox.network.allowedDomains)${
        needs.writePaths.length > 0
          ? ` and the writes to ${
            needs.writePaths.join(", ")
          } (sandbox.filesystem.allowWrite: for the refreshes of the tokens; without it a refreshed token lasts until the server stops)`
          : ""
      }.`,
    );
    if (signIn && needs.writePaths.length > 0 && signIn.entry.issuer === undefined) {
      report.add(
        "note",
        "The store names no authorization server yet: add its domain after the first sign-in (run doctor again).",
      );
    }
  }
  const snippet = sandboxSnippet(name, needs);
  report.add(
    "note",
    `mcp.json (the top-level "sandbox" is shared by every sandboxed server of the file): ${
      JSON.stringify(snippet)
    }`,
  );
  if (signInNeeded && !signIn?.usableToken && signIn?.entry.tokens?.refreshToken === undefined) {
    report.add(
      "break",
      "The server needs a sign-in, and in the sandbox the bridge cannot open a browser: sign in outside VS Code first (mcp-bridge-vscode login URL), then the bridge uses and refreshes the stored tokens.",
    );
  }
  return snippet;
}
