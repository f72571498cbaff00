/**
 * The sandbox part of `doctor` (SANDBOX_RUNTIME=1): the domains and paths
 * that the top-level `sandbox` of mcp.json must allow (the upstream host;
 * where the server signs in, the issuer and the store for the refreshes; no
 * proxy host and no read rule), the snippet in today's shape, and what
 * breaks there: a needed sign-in without a usable or refreshable token.
 * tests/doctor/main_test.ts runs the whole doctor in the sandbox, and
 * tests/process/sandbox_test.ts runs the bridge under the real sandbox with
 * the snippet.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { checkSandbox, sandboxNeeds } from "../../lib/doctor/sandbox.ts";
import { Report } from "../../lib/doctor/report.ts";
import type { SignInState } from "../../lib/doctor/sign_in_state.ts";
import type { RemoteTarget } from "../../lib/upstream/http_options.ts";

const remote = (url: string) => ({ url: new URL(url) }) as RemoteTarget;
const signIn = (issuer?: string, tokens?: SignInState["entry"]["tokens"], usable = false) => ({
  storeDir: "/home/u/.config/mcp-bridge/tokens",
  entry: { clients: [], ...(issuer && { issuer }), ...(tokens && { tokens }) },
  usableToken: usable,
});
const TOKENS = { accessToken: "a", tokenType: "Bearer", refreshToken: "r" };

Deno.test("sandboxNeeds: the upstream host; the issuer and the store only where the server signs in; never a proxy host or a read rule", () => {
  const saved = Deno.env.get("HTTPS_PROXY");
  Deno.env.set("HTTPS_PROXY", "http://user:pw@localhost:3128");
  try {
    // The server asked for a sign-in: its store (for the refreshes) and the issuer once known.
    deepStrictEqual(
      sandboxNeeds(remote("https://mcp.example/x?k=1"), signIn("https://as.example/o"), true),
      { domains: ["mcp.example", "as.example"], writePaths: ["/home/u/.config/mcp-bridge/tokens"] },
    );
    // Tokens in the store: it signs in, even when this probe got no challenge.
    deepStrictEqual(
      sandboxNeeds(remote("https://mcp.example/"), signIn("https://as.example", TOKENS), false),
      { domains: ["mcp.example", "as.example"], writePaths: ["/home/u/.config/mcp-bridge/tokens"] },
    );
    // A server that needs no sign-in: its host only, nothing writable.
    deepStrictEqual(sandboxNeeds(remote("http://mcp.example/"), signIn(), false), {
      domains: ["mcp.example"],
      writePaths: [],
    });
    // One domain once.
    deepStrictEqual(
      sandboxNeeds(remote("https://mcp.example/"), signIn("https://mcp.example"), true).domains,
      ["mcp.example"],
    );
    // A command: nothing of the bridge's own.
    deepStrictEqual(sandboxNeeds(undefined, undefined, false), { domains: [], writePaths: [] });
  } finally {
    if (saved === undefined) Deno.env.delete("HTTPS_PROXY");
    else Deno.env.set("HTTPS_PROXY", saved);
  }
});

Deno.test("checkSandbox: a needed sign-in breaks only without a usable token and without a refresh token", () => {
  const cases: [SignInState | undefined, boolean, number][] = [
    [signIn("https://as.example"), true, 1],
    [signIn("https://as.example", { accessToken: "a", tokenType: "Bearer" }, true), true, 0],
    [signIn("https://as.example", TOKENS), true, 0],
    [signIn("https://as.example"), false, 0],
    [undefined, true, 1],
  ];
  for (const [state, needed, breaks] of cases) {
    const report = new Report();
    checkSandbox(
      "s",
      sandboxNeeds(remote("https://mcp.example/"), state, needed),
      state,
      needed,
      false,
      report,
    );
    strictEqual(report.breaks, breaks, JSON.stringify([state, needed]));
  }
});

Deno.test("checkSandbox: the snippet in today's shape (sandboxEnabled in the entry, a top-level sandbox shared by every sandboxed server); a store without an issuer yet says to run doctor again; a command needs nothing", () => {
  const state = signIn();
  const report = new Report();
  const needs = sandboxNeeds(remote("https://mcp.example/"), state, true);
  const snippet = checkSandbox("my-server", needs, state, true, false, report);
  deepStrictEqual(snippet, {
    servers: { "my-server": { sandboxEnabled: true } },
    sandbox: {
      network: { allowedDomains: ["mcp.example"] },
      filesystem: { allowWrite: [state.storeDir] },
    },
  });
  deepStrictEqual(report.findings.map((f) => f.mark), ["note", "note", "note", "break"]);
  const [allow, issuer, line] = report.findings.map((f) => f.text);
  ok(
    allow!.startsWith(
      "SANDBOX_RUNTIME=1: allow the domains mcp.example (sandbox.network.allowedDomains) and the writes to /home/u/.config/mcp-bridge/tokens (sandbox.filesystem.allowWrite: for the refreshes of the tokens",
    ),
    allow,
  );
  ok(issuer!.includes("names no authorization server yet"), issuer);
  strictEqual(
    line,
    `mcp.json (the top-level "sandbox" is shared by every sandboxed server of the file): ${
      JSON.stringify(snippet)
    }`,
  );
  ok(!JSON.stringify(report.findings).includes("proxy"), "no proxy host");
  ok(!/denyRead|allowRead|reads of/.test(JSON.stringify(report.findings)), "no read rule");

  const stdio = new Report();
  const none = checkSandbox(
    "cmd",
    sandboxNeeds(undefined, undefined, false),
    undefined,
    false,
    true,
    stdio,
  );
  ok(stdio.findings[0]!.text.includes("the bridge needs no domain and no path of its own"));
  deepStrictEqual(none.sandbox, {
    network: { allowedDomains: [] },
    filesystem: { allowWrite: [] },
  });
});
