/**
 * `login URL` in process, with oidc-provider and the test browser on
 * 127.0.0.1: the terminal is outside VS Code's sandbox, so a
 * SANDBOX_RUNTIME=1 of the environment does not stop it; it asks for the
 * scope of the server's challenge and fills the store (exit 0); a failed
 * login is exit 1 with one line. tests/process/login_test.ts runs the
 * program (the browser of BROWSER, then sandboxed bridges on the store).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { runLogin } from "../../lib/auth/login.ts";
import { TokenStore } from "../../lib/auth/store.ts";
import { parseLogin } from "../../lib/cli/command_line.ts";
import { createLogger } from "../../lib/log.ts";
import { visit } from "../fixtures/auth/browser.ts";
import { startMcpResource } from "../fixtures/auth/mcp_resource.ts";
import { startProvider } from "../fixtures/auth/provider.ts";
import { waitFor } from "../wait.ts";
import { freePort } from "../free_port.ts";

/** The sandbox of VS Code, in the environment of the login. */
const SANDBOXED = (name: string) => name === "SANDBOX_RUNTIME" ? "1" : undefined;

Deno.test("login: SANDBOX_RUNTIME=1 does not stop it; the scope of the challenge is asked and the tokens are stored", async () => {
  const provider = await startProvider();
  // No scopes_supported in the resource metadata: the scope can come only from the challenge.
  const resource = startMcpResource(provider.issuer, { noScopesSupported: true });
  const dir = await Deno.makeTempDir({ prefix: "login-test-" });
  try {
    const store = `${dir}/store`;
    const command = parseLogin(
      [resource.url, "--token-store", store, "--redirect-port", String(freePort()), "--no-browser"],
      () => undefined,
    );
    const lines: string[] = [];
    const running = runLogin(command, createLogger("t", "info", (l) => lines.push(l)), SANDBOXED);
    const startUrl = () => lines.join("").match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0];
    await waitFor("the start URL in the log", () => startUrl() !== undefined);
    const seen = await visit(startUrl()!, "login");
    ok(seen.text.includes("The sign-in is done"), seen.text);
    strictEqual(await running, 0, lines.join(""));
    const entry = await (await TokenStore.open(store)).read(resource.url);
    ok(entry.tokens?.accessToken);
    ok(entry.tokens.requestedScope?.split(" ").includes("mcp:read"), entry.tokens.requestedScope);
    ok(lines.at(-1)!.includes("the tokens are stored"), lines.at(-1));
    const output = lines.join("");
    const leaks = [...provider.secrets, ...resource.tokensSeen].filter((s) => output.includes(s));
    deepStrictEqual(leaks, []);
    ok(!output.includes(resource.secretPath), "the path of the server's URL");
  } finally {
    await resource.close();
    await provider.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("login: an authorization server out of reach is exit 1 with one error line, without the server's path", async () => {
  const provider = await startProvider();
  const resource = startMcpResource(provider.issuer);
  await provider.close();
  const dir = await Deno.makeTempDir({ prefix: "login-test-" });
  try {
    const command = parseLogin(
      [resource.url, "--token-store", `${dir}/store`, "--redirect-port", String(freePort())],
      () => undefined,
    );
    const lines: string[] = [];
    const code = await runLogin(
      command,
      createLogger("t", "info", (l) => lines.push(l)),
      () => undefined,
    );
    strictEqual(code, 1);
    // One line: the message of the error table, the step that failed.
    deepStrictEqual(lines, [
      "[t] error: login failed: The sign-in at the authorization server of the upstream server failed. See the Output channel of the server. (authorization server metadata: no response)\n",
    ]);
    ok(!lines.join("").includes(resource.secretPath), lines.join(""));
  } finally {
    await resource.close();
    await Deno.remove(dir, { recursive: true });
  }
});
