/**
 * The sign-in end to end: the real program (the bundle, `program.ts`, with a URL)
 * between the v1 SDK client and an SDK v2 server behind a resource server,
 * with oidc-provider as the authorization server and the test browser of
 * `BROWSER`. Every byte of stdout and stderr is scanned for the tokens, the
 * codes, the verifiers and the URL path of the server.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { visit } from "../fixtures/auth/browser.ts";
import { writeBrowserScript } from "../fixtures/auth/browser_script.ts";
import { startMcpResource } from "../fixtures/auth/mcp_resource.ts";
import { type ProviderOptions, startProvider } from "../fixtures/auth/provider.ts";
import type { RunningResource } from "../fixtures/auth/resource.ts";
import { freePort } from "../free_port.ts";
import { waitFor } from "../wait.ts";
import { BridgeProcess, connectV1, runBridge } from "./helpers.ts";

interface E2E {
  readonly provider: Awaited<ReturnType<typeof startProvider>>;
  readonly resource: RunningResource;
  readonly dir: string;
  readonly store: string;
  readonly port: number;
  readonly browserLog: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  opens(): Promise<number>;
  /** The secrets that `text` shows. */
  leaks(text: string): string[];
  close(): Promise<void>;
}

async function world(options: ProviderOptions = {}): Promise<E2E> {
  const provider = await startProvider(options);
  const resource = startMcpResource(provider.issuer);
  const dir = await Deno.makeTempDir({ prefix: "auth-e2e-" });
  const store = `${dir}/store`;
  const port = freePort();
  const browserLog = `${dir}/browser.log`;
  const browser = await writeBrowserScript(dir);
  return {
    provider,
    resource,
    dir,
    store,
    port,
    browserLog,
    args: [
      resource.url,
      "--token-store",
      store,
      "--redirect-port",
      String(port),
      "--log-level",
      "debug",
    ],
    env: { BROWSER: browser, AUTH_BROWSER_LOG: browserLog },
    opens: async () => {
      try {
        return (await Deno.readTextFile(browserLog)).split("\n").filter((l) => l.includes('"open"'))
          .length;
      } catch {
        return 0;
      }
    },
    leaks: (text) => {
      const found = [...provider.secrets, ...resource.tokensSeen].filter((s) => text.includes(s));
      if (text.includes(resource.secretPath)) found.push("the URL path of the server");
      return found;
    },
    close: async () => {
      await resource.close();
      await provider.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("process: the first sign-in during initialize, a call, then a restart without a browser", async () => {
  const w = await world();
  try {
    const first = await connectV1(w.args, w.env);
    const result = await first.client.callTool({ name: "echo", arguments: { text: "hi" } });
    deepStrictEqual(result.content, [{ type: "text", text: "hi" }]);
    await first.client.close();
    strictEqual(await w.opens(), 1);
    ok(first.stderr().includes(`http://127.0.0.1:${w.port}/start/`), first.stderr());
    deepStrictEqual(w.leaks(first.stderr()), []);
    const second = await connectV1(w.args, w.env);
    await second.client.callTool({ name: "echo", arguments: { text: "again" } });
    await second.client.close();
    strictEqual(await w.opens(), 1, "the restart used the stored token");
    strictEqual(w.provider.registered.length, 1);
    deepStrictEqual(w.leaks(second.stderr()), []);
    const done = (await Deno.readTextFile(w.browserLog)).split("\n").find((l) =>
      l.includes('"done"')
    )!;
    ok(JSON.parse(done).text.includes("The sign-in is done"));
    for await (const file of Deno.readDir(w.store)) {
      strictEqual((await Deno.stat(`${w.store}/${file.name}`)).mode! & 0o777, 0o600);
    }
  } finally {
    await w.close();
  }
});

Deno.test("process: a refresh that fails asks the client with a URL elicitation; declined is reauthorization_required", async () => {
  const w = await world({ accessTokenTtl: 30 });
  try {
    const answers: ("accept" | "decline")[] = ["accept", "decline"];
    const asked: string[] = [];
    const { client, stderr } = await connectV1(w.args, w.env, { elicitation: { url: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request: { params: unknown }) => {
      const params = request.params as { mode?: string; url?: string };
      strictEqual(params.mode, "url");
      asked.push(params.url!);
      const action = answers.shift()!;
      if (action === "accept") await visit(params.url!, "login");
      return { action };
    });
    await client.callTool({ name: "echo", arguments: { text: "1" } });
    strictEqual(await w.opens(), 1);
    const revoke = async () => {
      const store = [...Deno.readDirSync(w.store)].find((f) => f.name.endsWith(".json"))!;
      const entry = JSON.parse(await Deno.readTextFile(`${w.store}/${store.name}`)).entry;
      const response = await fetch(`${w.provider.issuer}/token/revocation`, {
        method: "POST",
        body: new URLSearchParams({ token: entry.tokens.refreshToken, client_id: entry.clientId }),
      });
      await response.body?.cancel();
    };
    await revoke();
    const again = await client.callTool({ name: "echo", arguments: { text: "2" } });
    deepStrictEqual(again.content, [{ type: "text", text: "2" }]);
    strictEqual(asked.length, 1);
    ok(asked[0]!.startsWith(`http://127.0.0.1:${w.port}/start/`));
    strictEqual(await w.opens(), 1, "the elicitation replaced the browser");
    await revoke();
    let message = "";
    let data: unknown;
    try {
      await client.callTool({ name: "echo", arguments: { text: "3" } });
    } catch (error) {
      message = (error as Error).message;
      data = (error as { data?: unknown }).data;
    }
    ok(message.includes("needs a new sign-in"), message);
    deepStrictEqual((data as { detail?: string })?.detail, "declined");
    await client.close();
    deepStrictEqual(w.leaks(stderr()), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: two bridges started at once open one browser and register one client", async () => {
  const w = await world();
  try {
    const [a, b] = await Promise.all([connectV1(w.args, w.env), connectV1(w.args, w.env)]);
    await Promise.all([
      a.client.callTool({ name: "echo", arguments: { text: "a" } }),
      b.client.callTool({ name: "echo", arguments: { text: "b" } }),
    ]);
    await a.client.close();
    await b.client.close();
    strictEqual(await w.opens(), 1);
    strictEqual(w.provider.registered.length, 1);
    deepStrictEqual(w.leaks(a.stderr() + b.stderr()), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: step-up on insufficient_scope, then a call with the new scope", async () => {
  const w = await world();
  try {
    const { client, stderr } = await connectV1(w.args, w.env);
    const written = await client.callTool({ name: "write_note", arguments: {} });
    deepStrictEqual(written.content, [{ type: "text", text: "written" }]);
    strictEqual(await w.opens(), 2, "the sign-in, then the step-up");
    await client.close();
    deepStrictEqual(w.leaks(stderr()), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: logout revokes and removes the tokens and the client", async () => {
  const w = await world();
  try {
    const { client } = await connectV1(w.args, w.env);
    await client.callTool({ name: "echo", arguments: { text: "x" } });
    await client.close();
    const before = w.provider.hits.get("/token/revocation") ?? 0;
    const out = await runBridge(["logout", w.resource.url, "--token-store", w.store]);
    strictEqual(out.code, 0, out.stderr);
    strictEqual(out.stdout, "");
    ok((w.provider.hits.get("/token/revocation") ?? 0) >= before + 1);
    deepStrictEqual([...Deno.readDirSync(w.store)].filter((f) => f.name.endsWith(".json")), []);
    deepStrictEqual(w.leaks(out.stderr), []);
    // The revoked tokens do not work any more: the next bridge signs in again.
    const next = await connectV1(w.args, w.env);
    await next.client.callTool({ name: "echo", arguments: { text: "y" } });
    await next.client.close();
    strictEqual(await w.opens(), 2);
  } finally {
    await w.close();
  }
});

Deno.test("process: SANDBOX_RUNTIME=1 fails initialize at once with sandbox", async () => {
  const w = await world();
  try {
    await using bridge = new BridgeProcess(w.args, { ...w.env, SANDBOX_RUNTIME: "1" });
    const response = await bridge.initialize();
    const error = response.error as { message: string };
    ok(error.message.includes("sandbox of VS Code"), error.message);
    strictEqual(await w.opens(), 0);
  } finally {
    await w.close();
  }
});

Deno.test("process: the time limit during initialize is sign_in_timeout with the seconds", async () => {
  const w = await world();
  try {
    await using bridge = new BridgeProcess(
      [...w.args, "--sign-in-timeout", "1", "--discover-timeout", "1"],
      { ...w.env, AUTH_BROWSER_MODE: "idle" },
    );
    const response = await bridge.initialize();
    const error = response.error as { message: string };
    ok(error.message.includes("did not complete in 1 s"), error.message);
    ok(error.message.includes('"mcp-bridge-vscode logout <url>"'), error.message);
    deepStrictEqual(w.leaks(bridge.stderr + bridge.stdout), []);
  } finally {
    await w.close();
  }
});

Deno.test("process: --no-browser logs the start URL and starts no browser", async () => {
  const w = await world();
  try {
    await using bridge = new BridgeProcess([...w.args, "--no-browser"], w.env);
    const init = bridge.initialize();
    const url = await waitFor(
      "the start URL in the log",
      () => bridge.stderr.match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0],
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    await visit(url, "login");
    const response = await init;
    ok(response.result, JSON.stringify(response));
    strictEqual(await w.opens(), 0);
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await bridge.request(2, "tools/call", { name: "echo", arguments: { text: "raw" } });
    const called = await bridge.response(2);
    ok(called.result, JSON.stringify(called));
    strictEqual(await bridge.exit(), 0);
    // Every byte of stdout and stderr.
    deepStrictEqual(w.leaks(bridge.stdout + bridge.stderr), []);
    ok(
      w.resource.tokensSeen.size > 0 && w.provider.secrets.size >= 3,
      "the scan had secrets to look for",
    );
  } finally {
    await w.close();
  }
});
