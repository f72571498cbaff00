/**
 * The sandbox part of `doctor` (SANDBOX_RUNTIME=1): the domains and paths
 * that the sandbox of the server must allow (the upstream host, the proxy of
 * its scheme, the issuer, the store, the CA file), and what breaks there: a
 * needed sign-in without a usable or refreshable token.
 * tests/doctor/main_test.ts runs the whole doctor in the sandbox.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { checkSandbox, sandboxNeeds } from "../../lib/doctor/sandbox.ts";
import { Report } from "../../lib/doctor/report.ts";
import type { SignInState } from "../../lib/doctor/sign_in_state.ts";
import type { RemoteTarget } from "../../lib/upstream/http_options.ts";

const remote = (url: string) => ({ url: new URL(url) }) as RemoteTarget;
const envOf = (vars: Record<string, string>) => (name: string) => vars[name];
const signIn = (issuer?: string, tokens?: SignInState["entry"]["tokens"], usable = false) => ({
  storeDir: "/home/u/.config/mcp-bridge/tokens",
  entry: { clients: [], ...(issuer && { issuer }), ...(tokens && { tokens }) },
  usableToken: usable,
});

Deno.test("sandboxNeeds: the upstream host, the proxy of its scheme (with or without one), the issuer, the store, the CA file", () => {
  const env = envOf({
    HTTPS_PROXY: "proxy.example:3128",
    http_proxy: "http://plain-proxy.example:8080",
  });
  deepStrictEqual(
    sandboxNeeds(
      remote("https://mcp.example/x?k=1"),
      "/etc/ca.pem",
      signIn("https://as.example/o"),
      env,
    ),
    {
      domains: ["mcp.example", "proxy.example", "as.example"],
      writePaths: ["/home/u/.config/mcp-bridge/tokens"],
      readPaths: ["/etc/ca.pem"],
    },
  );
  deepStrictEqual(sandboxNeeds(remote("http://mcp.example/"), undefined, undefined, env), {
    domains: ["mcp.example", "plain-proxy.example"],
    writePaths: [],
    readPaths: [],
  });
  // One domain once; a proxy value that is not a URL is left out.
  deepStrictEqual(
    sandboxNeeds(
      remote("https://mcp.example/"),
      undefined,
      signIn("https://mcp.example"),
      envOf({
        HTTPS_PROXY: "http://[bad",
      }),
    ).domains,
    ["mcp.example"],
  );
  // A command: nothing of the bridge's own.
  deepStrictEqual(sandboxNeeds(undefined, undefined, undefined, env), {
    domains: [],
    writePaths: [],
    readPaths: [],
  });
});

const marks = (report: Report) => report.findings.map((f) => f.mark);

Deno.test("checkSandbox: a needed sign-in breaks only without a usable token and without a refresh token", () => {
  const needs = sandboxNeeds(
    remote("https://mcp.example/"),
    undefined,
    signIn("https://as.example"),
    envOf({}),
  );
  const cases: [SignInState | undefined, boolean, number][] = [
    [signIn("https://as.example"), true, 1],
    [signIn("https://as.example", { accessToken: "a", tokenType: "Bearer" }, true), true, 0],
    [
      signIn("https://as.example", { accessToken: "a", tokenType: "Bearer", refreshToken: "r" }),
      true,
      0,
    ],
    [signIn("https://as.example"), false, 0],
    [undefined, true, 1],
  ];
  for (const [state, needed, breaks] of cases) {
    const report = new Report();
    checkSandbox(needs, state, needed, false, report);
    strictEqual(report.breaks, breaks, JSON.stringify([state, needed]));
  }
});

Deno.test("checkSandbox: the snippet for mcp.json; a store without an issuer yet says to run doctor again; a command needs nothing", () => {
  const state = signIn();
  const report = new Report();
  const needs = sandboxNeeds(remote("https://mcp.example/"), "/ca.pem", state, envOf({}));
  checkSandbox(needs, state, false, false, report);
  deepStrictEqual(marks(report), ["note", "note", "note"]);
  const [allow, issuer, snippet] = report.findings.map((f) => f.text);
  strictEqual(
    allow,
    `SANDBOX_RUNTIME=1: allow the domains mcp.example and the writes to ${state.storeDir} and the reads of /ca.pem.`,
  );
  ok(issuer!.includes("names no authorization server yet"), issuer);
  strictEqual(
    snippet,
    `mcp.json: "sandboxEnabled": true, "sandbox": {"network":{"allowedDomains":["mcp.example"]},"filesystem":{"allowWrite":[${
      JSON.stringify(state.storeDir)
    }]}}`,
  );

  const stdio = new Report();
  checkSandbox(
    sandboxNeeds(undefined, undefined, undefined, envOf({})),
    undefined,
    false,
    true,
    stdio,
  );
  ok(stdio.findings[0]!.text.includes("the bridge needs no domain and no path of its own"));
  strictEqual(
    stdio.findings[1]!.text,
    'mcp.json: "sandboxEnabled": true, "sandbox": {"network":{"allowedDomains":[]}}',
  );
});
