/**
 * `login URL` end to end: the real program signs in from a "terminal" (the
 * test browser of `BROWSER`, or `--no-browser` and the URL on stderr, or the
 * redirect address of a browser on another machine pasted on its stdin)
 * with oidc-provider, and fills the store; then bridges with SANDBOX_RUNTIME=1
 * (VS Code's sandbox) call a tool with the stored token, and refresh it once
 * it expired, without a browser. A needed new sign-in there is `sandbox`,
 * and its log line names `login` without the URL's path. The exit 2 of a
 * token store that others can write is in tests/cli/run_test.ts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { visit } from "../fixtures/auth/browser.ts";
import { writeBrowserScript } from "../fixtures/auth/browser_script.ts";
import { startMcpResource } from "../fixtures/auth/mcp_resource.ts";
import { startProvider } from "../fixtures/auth/provider.ts";
import { freePort } from "../free_port.ts";
import { waitFor } from "../wait.ts";
import { BridgeProcess, connectV1, DENO, programArgs, ROOT, runBridge } from "./helpers.ts";

async function storeEntry(store: string): Promise<{
  tokens: { accessToken: string; refreshToken: string; expiresAt: number };
}> {
  const file = [...Deno.readDirSync(store)].find((f) => f.name.endsWith(".json"))!;
  return JSON.parse(await Deno.readTextFile(`${store}/${file.name}`)).entry;
}

async function setup() {
  const provider = await startProvider();
  const resource = startMcpResource(provider.issuer);
  const dir = await Deno.makeTempDir({ prefix: "auth-login-" });
  const store = `${dir}/store`;
  const browserLog = `${dir}/browser.log`;
  const args = [resource.url, "--token-store", store, "--redirect-port", String(freePort())];
  const env = { BROWSER: await writeBrowserScript(dir), AUTH_BROWSER_LOG: browserLog };
  const opens = async () => {
    try {
      return (await Deno.readTextFile(browserLog)).split("\n").filter((l) => l.includes('"open"'))
        .length;
    } catch {
      return 0;
    }
  };
  const leaks = (text: string) => {
    const found = [...provider.secrets, ...resource.tokensSeen].filter((s) => text.includes(s));
    if (text.includes(resource.secretPath)) found.push("the URL path of the server");
    return found;
  };
  return {
    provider,
    resource,
    dir,
    store,
    args,
    env,
    opens,
    leaks,
    close: async () => {
      await resource.close();
      await provider.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("process: login fills the store; a sandboxed bridge calls a tool with it, and refreshes it once expired", async () => {
  const w = await setup();
  try {
    const login = await runBridge(["login", ...w.args], w.env);
    strictEqual(login.code, 0, login.stderr);
    strictEqual(login.stdout, "");
    strictEqual(await w.opens(), 1, "login opened the browser");
    deepStrictEqual(w.leaks(login.stderr), []);
    const stored = await storeEntry(w.store);
    ok(stored.tokens.refreshToken);

    const sandboxed = { ...w.env, SANDBOX_RUNTIME: "1" };
    const first = await connectV1(w.args, sandboxed);
    const result = await first.client.callTool({ name: "echo", arguments: { text: "boxed" } });
    deepStrictEqual(result.content, [{ type: "text", text: "boxed" }]);
    await first.client.close();
    strictEqual((await storeEntry(w.store)).tokens.accessToken, stored.tokens.accessToken);
    ok(w.resource.tokensSeen.has(stored.tokens.accessToken), "the stored token was sent");

    // The access token expires (as the bridge sees it): the next bridge refreshes it.
    const file = [...Deno.readDirSync(w.store)].find((f) => f.name.endsWith(".json"))!;
    const raw = JSON.parse(await Deno.readTextFile(`${w.store}/${file.name}`));
    raw.entry.tokens.expiresAt = Date.now() - 1_000;
    await Deno.writeTextFile(`${w.store}/${file.name}`, JSON.stringify(raw));
    const before = w.provider.hits.get("/token") ?? 0;
    const second = await connectV1(w.args, sandboxed);
    const again = await second.client.callTool({ name: "echo", arguments: { text: "fresh" } });
    deepStrictEqual(again.content, [{ type: "text", text: "fresh" }]);
    await second.client.close();
    const refreshed = await storeEntry(w.store);
    ok(refreshed.tokens.accessToken !== stored.tokens.accessToken, "a new access token");
    ok(refreshed.tokens.refreshToken !== stored.tokens.refreshToken, "the rotation is stored");
    strictEqual((w.provider.hits.get("/token") ?? 0) - before, 1, "one refresh request");
    strictEqual(await w.opens(), 1, "no browser in the sandbox");
    deepStrictEqual(w.leaks(first.stderr() + second.stderr()), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: login --no-browser prints the start URL on stderr; a failed login is one line and exit 1", async () => {
  const w = await setup();
  try {
    const child = new Deno.Command(DENO, {
      args: programArgs(["login", ...w.args, "--no-browser"]),
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let stderr = "";
    const reading = (async () => {
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) stderr += text;
    })();
    const deadline = Date.now() + 20_000;
    let url: string | undefined;
    while (url === undefined && Date.now() < deadline) {
      url = stderr.match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0];
      if (url === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    ok(url, stderr);
    const seen = await visit(url, "login");
    ok(seen.text.includes("The sign-in is done"), seen.text);
    const status = await child.status;
    await reading;
    await child.stdout.cancel().catch(() => {});
    strictEqual(status.code, 0, stderr);
    strictEqual(await w.opens(), 0);
    ok((await storeEntry(w.store)).tokens.accessToken);
    deepStrictEqual(w.leaks(stderr), []);

    w.provider.faults.token = 503;
    const failed = await runBridge(["login", ...w.args], w.env);
    strictEqual(failed.code, 1, failed.stderr);
    const errors = failed.stderr.split("\n").filter((line) => line.includes("error"));
    strictEqual(errors.length, 1, failed.stderr);
    ok(
      errors[0]!.includes("login failed") && errors[0]!.includes("token request: HTTP status 503"),
    );
  } finally {
    await w.close();
  }
});

/** `login --no-browser` of the program, with its stdin open for the test to write. */
function spawnLogin(args: string[]) {
  const child = new Deno.Command(DENO, {
    args: programArgs(["login", ...args, "--no-browser"]),
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = (async () => {
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) stderr += text;
  })();
  const stdout = new Response(child.stdout).text();
  const stdin = child.stdin.getWriter();
  const enc = new TextEncoder();
  return {
    stderr: () => stderr,
    paste: (text: string) => stdin.write(enc.encode(text)),
    /** The exit of login, with stdin still open: login does not wait for its end. */
    exit: async () => {
      const status = await child.status;
      await reading;
      return { code: status.code, stdout: await stdout };
    },
    [Symbol.asyncDispose]: async () => {
      await stdin.close().catch(() => {});
      try {
        child.kill();
      } catch {
        // exited
      }
      await child.status;
      await reading;
      await stdout;
    },
  };
}

Deno.test("process: login --no-browser prints the authorization URL; the redirect address pasted on stdin completes the sign-in, with no request to the listener", async () => {
  const w = await setup();
  try {
    await using login = spawnLogin(w.args);
    const port = w.args[w.args.indexOf("--redirect-port") + 1];
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    // On a line of its own: the authorization URL at the provider.
    const authorizationUrl = await waitFor(
      "the authorization URL",
      () => login.stderr().split("\n").find((line) => line.startsWith(`${w.provider.issuer}/`)),
      {
        timeoutMs: 30_000,
      },
    );
    ok(login.stderr().includes("paste here the address"), login.stderr());
    // A browser on another machine: it signs in and ends on the redirect, which it cannot load.
    const seen = await visit(authorizationUrl, "login", { landing: redirectUri });
    ok(seen.landed, JSON.stringify(seen));
    const code = new URL(seen.landed).searchParams.get("code")!;
    const tampered = new URL(seen.landed);
    tampered.searchParams.set("state", "tampered-state-0123456789");
    await login.paste(`some garbage 42\n${tampered.href}\n`);
    await waitFor("two warn lines", () => login.stderr().split("warn: ").length === 3, {
      timeoutMs: 30_000,
    });
    await login.paste(`${seen.landed}\n`);
    const { code: exit, stdout } = await login.exit();
    strictEqual(exit, 0, login.stderr());
    strictEqual(stdout, "");
    strictEqual(await w.opens(), 0, "no browser");
    ok((await storeEntry(w.store)).tokens.accessToken, "the tokens are stored");
    ok(login.stderr().includes("the tokens are stored"), login.stderr());
    const stderr = login.stderr();
    for (const pasted of [code, seen.landed, tampered.href, "tampered-state", "some garbage"]) {
      ok(!stderr.includes(pasted), `stderr shows the pasted ${pasted}: ${stderr}`);
    }
    deepStrictEqual(w.leaks(stderr), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: login --no-browser with nothing pasted and stdin open: the browser's redirect completes it, and login exits", async () => {
  const w = await setup();
  try {
    await using login = spawnLogin(w.args);
    const startUrl = await waitFor(
      "the start URL",
      () => login.stderr().match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0],
      { timeoutMs: 30_000 },
    );
    const seen = await visit(startUrl, "login");
    ok(seen.text.includes("The sign-in is done"), seen.text);
    strictEqual((await login.exit()).code, 0, login.stderr());
    ok((await storeEntry(w.store)).tokens.accessToken);
    deepStrictEqual(w.leaks(login.stderr()), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: a needed new sign-in in the sandbox is sandbox; its log line names login and the origin only", async () => {
  const w = await setup();
  try {
    await using bridge = new BridgeProcess(w.args, { ...w.env, SANDBOX_RUNTIME: "1" });
    const response = await bridge.initialize();
    const error = response.error as { message: string; data?: { cause?: string } };
    strictEqual(error.data?.cause, "sandbox");
    strictEqual(await w.opens(), 0);
    await bridge.exit();
    const line = bridge.stderr.split("\n").find((l) => l.includes("login URL"));
    ok(line, bridge.stderr);
    ok(line.includes("mcp-bridge-vscode login URL"), line);
    ok(line.includes(new URL(w.resource.url).origin), line);
    deepStrictEqual(w.leaks(bridge.stderr + bridge.stdout), []);
  } finally {
    await w.close();
  }
});
