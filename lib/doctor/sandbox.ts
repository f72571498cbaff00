/**
 * The sandbox part of `doctor` (SANDBOX_RUNTIME=1, as VS Code sets it in a
 * sandboxed server): the domains and the paths that the `sandbox` of the
 * server in `mcp.json` must allow, as a snippet to paste.
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
  readonly readPaths: readonly string[];
}

/** The host of a URL text (a proxy variable may lack the scheme), or undefined. */
function hostOf(text: string | undefined): string | undefined {
  if (text === undefined || text === "") return undefined;
  try {
    return new URL(text.includes("://") ? text : `http://${text}`).hostname;
  } catch {
    return undefined;
  }
}

/** The domains and paths of the bridge in front of `remote` (or of a command). */
export function sandboxNeeds(
  remote: RemoteTarget | undefined,
  caFile: string | undefined,
  signIn: SignInState | undefined,
  env: (name: string) => string | undefined,
): SandboxNeeds {
  const domains = new Set<string>();
  const writePaths: string[] = [];
  if (remote) {
    domains.add(remote.url.hostname);
    const proxy = remote.url.protocol === "https:"
      ? env("HTTPS_PROXY") ?? env("https_proxy")
      : env("HTTP_PROXY") ?? env("http_proxy");
    const proxyHost = hostOf(proxy);
    if (proxyHost) domains.add(proxyHost);
  }
  if (signIn) {
    const issuer = hostOf(signIn.entry.issuer);
    if (issuer) domains.add(issuer);
    writePaths.push(signIn.storeDir);
  }
  return { domains: [...domains], writePaths, readPaths: caFile ? [caFile] : [] };
}

/**
 * Reports the sandbox's needs, and what breaks in it: a sign-in needs a
 * browser, which the sandbox does not have.
 */
export function checkSandbox(
  needs: SandboxNeeds,
  signIn: SignInState | undefined,
  signInNeeded: boolean,
  stdio: boolean,
  report: Report,
): void {
  if (stdio) {
    report.add(
      "note",
      "SANDBOX_RUNTIME=1: the bridge needs no domain and no path of its own; the upstream command runs in the sandbox too, so allow what it reaches.",
    );
  } else {
    report.add(
      "note",
      `SANDBOX_RUNTIME=1: allow the domains ${needs.domains.join(", ")}${
        needs.writePaths.length > 0 ? ` and the writes to ${needs.writePaths.join(", ")}` : ""
      }${needs.readPaths.length > 0 ? ` and the reads of ${needs.readPaths.join(", ")}` : ""}.`,
    );
    if (signIn && signIn.entry.issuer === undefined) {
      report.add(
        "note",
        "The store names no authorization server yet: add its domain after the first sign-in (run doctor again).",
      );
    }
  }
  const filesystem = needs.writePaths.length > 0 ? { allowWrite: needs.writePaths } : undefined;
  const sandbox = {
    network: { allowedDomains: needs.domains },
    ...(filesystem && { filesystem }),
  };
  report.add("note", `mcp.json: "sandboxEnabled": true, "sandbox": ${JSON.stringify(sandbox)}`);
  if (signInNeeded && !signIn?.usableToken && signIn?.entry.tokens?.refreshToken === undefined) {
    report.add(
      "break",
      "The server needs a sign-in, and in the sandbox the bridge cannot open a browser: sign in outside VS Code first (mcp-bridge-vscode login URL), then the bridge uses and refreshes the stored tokens.",
    );
  }
}
