/**
 * The bridge inside VS Code's sandbox, for real: the sandbox runtime that VS
 * Code uses (`srt` of `@anthropic-ai/sandbox-runtime`, bubblewrap and socat
 * on Linux), launched as VS Code launches a server with `"sandboxEnabled":
 * true`. The settings of each case are made from what `doctor --json`
 * printed (its snippet's top-level `sandbox`, plus VS Code's own additions:
 * `tests/process/srt.ts`). Every upstream is on this machine: srt's proxy
 * reaches the test hosts through names of /etc/hosts on 127.0.0.1 (listed
 * in allowedDomains with the address, as srt asks for a loopback address).
 *
 * Where srt cannot run (no bubblewrap, socat or ripgrep, not Linux, not
 * root for /etc/hosts), each test is ignored and says "skipped" and why.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, ROOT } from "./helpers.ts";
import {
  doctorJson,
  type McpSandbox,
  programArgv,
  SandboxedBridge,
  SRT_MISSING,
  testEnv,
  TestHosts,
  vscodeSettings,
  writeSettings,
} from "./srt.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { sdkHandler, serveRaw, type Upstream } from "../fixtures/http_upstream.ts";
import { startMcpResource } from "../fixtures/auth/mcp_resource.ts";
import { startProvider } from "../fixtures/auth/provider.ts";
import { freePort } from "../free_port.ts";

if (SRT_MISSING !== undefined) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(`skipped: the tests under VS Code's sandbox (srt): ${SRT_MISSING}\n`),
  );
}

/** A test under srt: ignored, with the reason in its name, where srt cannot run. */
function sandboxTest(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name: SRT_MISSING === undefined
      ? `sandbox (srt): ${name}`
      : `sandbox (srt): ${name} (skipped: ${SRT_MISSING})`,
    ignore: SRT_MISSING !== undefined,
    // srt's proxies stay up in its own process until it exits; the bridge's pipes are closed.
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });
}

const hosts = SRT_MISSING === undefined ? new TestHosts(2) : undefined;
if (hosts) globalThis.addEventListener("unload", () => hosts.remove());
/** The host of the upstream servers, allowed. */
const HOST = hosts?.names[0] ?? "unused.test";
/** A host that no rule allows. */
const OTHER = hosts?.names[1] ?? "unused.test";

const MODERN_SERVER = ["deno", "run", "-A", `${ROOT}tests/fixtures/modern_server.ts`];

/** A folder of one test: the config home of the bridge (never made), the settings. */
async function testDir(): Promise<{ dir: string; configHome: string; done: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "sandbox-test-" });
  return {
    dir,
    configHome: `${dir}/config`,
    done: () => Deno.remove(dir, { recursive: true }),
  };
}

/** srt's settings from the snippet of `doctor --json`, the way VS Code makes them. */
async function settingsFrom(
  dir: string,
  sandbox: McpSandbox,
  extraDomains: readonly string[] = [],
): Promise<string> {
  const settings = vscodeSettings(sandbox, ROOT);
  settings.network.allowedDomains.push(...extraDomains);
  return await writeSettings(dir, settings);
}

/** The SDK v2 fixture server on 127.0.0.1 with the URL of the test host. */
function upstreamAt(tls?: { cert: string; key: string }): Upstream & { hostUrl: string } {
  const handler = sdkHandler({ lean: true });
  const upstream = serveRaw((request) => handler.fetch(request), "/mcp/secret-path", tls);
  const close = async () => {
    await handler.close();
    await upstream.close();
  };
  return {
    ...upstream,
    hostUrl: `${tls ? "https" : "http"}://${HOST}:${upstream.port}/mcp/secret-path`,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Initialize, then a call of the tool echo: its text. */
async function echoThrough(bridge: SandboxedBridge, text: string): Promise<string> {
  const init = await bridge.initialize({}, true);
  ok(init.result, JSON.stringify(init));
  const [result] = (await bridge.call(2, "echo", { text })).slice(-1);
  const content = (result?.result as { content?: { text: string }[] } | undefined)?.content;
  ok(content, JSON.stringify(result));
  return content[0]!.text;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

sandboxTest("a stdio upstream works; doctor's snippet asks for no domain and no path", async () => {
  const t = await testDir();
  try {
    const argv = ["--", ...MODERN_SERVER];
    const doctor = await doctorJson(argv, { XDG_CONFIG_HOME: t.configHome });
    deepStrictEqual(doctor.json.snippet.sandbox, {
      network: { allowedDomains: [] },
      filesystem: { allowWrite: [] },
    });
    const settings = await settingsFrom(t.dir, doctor.json.snippet.sandbox);
    await using bridge = new SandboxedBridge(settings, argv, { XDG_CONFIG_HOME: t.configHome });
    strictEqual(await echoThrough(bridge, "boxed"), "boxed");
    strictEqual(await bridge.exit(), 0);
    ok(!exists(t.configHome), "nothing written");
  } finally {
    await t.done();
  }
});

for (const scheme of ["http", "https"] as const) {
  sandboxTest(
    `an ${scheme} URL upstream that needs no sign-in works with nothing writable${
      scheme === "https" ? " (--ca-file, through srt's CONNECT proxy)" : ""
    }`,
    async () => {
      const t = await testDir();
      const certs = scheme === "https" ? await makeCertificates([HOST]) : undefined;
      await using upstream = upstreamAt(certs && { cert: certs.cert, key: certs.key });
      try {
        const argv = certs
          ? ["--ca-file", certs.caFile, upstream.hostUrl]
          : ["--allow-http", upstream.hostUrl];
        const env = { XDG_CONFIG_HOME: t.configHome };
        const doctor = await doctorJson(argv, env);
        deepStrictEqual(doctor.json.snippet.sandbox, {
          network: { allowedDomains: [HOST] },
          filesystem: { allowWrite: [] },
        });
        ok(!exists(t.configHome), "doctor made no store");
        // The test host is on 127.0.0.1: srt allows a loopback address only when it is listed.
        const settings = await settingsFrom(t.dir, doctor.json.snippet.sandbox, ["127.0.0.1"]);
        await using bridge = new SandboxedBridge(settings, argv, env);
        strictEqual(await echoThrough(bridge, `via ${scheme}`), `via ${scheme}`);
        strictEqual(await bridge.exit(), 0);
        ok(!exists(t.configHome), "the store was never made");
        ok(upstream.seen.length > 0);
        ok(
          upstream.seen.every((seen) => !seen.headers.has("authorization")),
          "no token was sent",
        );
      } finally {
        await t.done();
      }
    },
  );
}

sandboxTest(
  "a domain that is not allowed: discover_failed with the proxy's detail at once (not at the discover limit), one warn line with the rule, and ping still answers",
  async () => {
    const t = await testDir();
    const certs = await makeCertificates([HOST, OTHER]);
    await using upstream = upstreamAt({ cert: certs.cert, key: certs.key });
    try {
      const allowed = ["--ca-file", certs.caFile, upstream.hostUrl];
      const doctor = await doctorJson(allowed, { XDG_CONFIG_HOME: t.configHome });
      const settings = await settingsFrom(t.dir, doctor.json.snippet.sandbox, ["127.0.0.1"]);
      const before = upstream.seen.length;
      // The same server under a name that the rules do not hold.
      const argv = ["--ca-file", certs.caFile, upstream.hostUrl.replace(HOST, OTHER)];
      await using bridge = new SandboxedBridge(settings, argv, { XDG_CONFIG_HOME: t.configHome });
      const started = performance.now();
      const response = await bridge.initialize();
      const elapsed = performance.now() - started;
      const error = response.error as { data: { cause: string; detail: string } };
      strictEqual(error.data.cause, "discover_failed");
      strictEqual(error.data.detail, "the proxy refused the connection");
      // At once: far below --discover-timeout (60 s), which a wait for the refused host would
      // reach (a bound for a loaded machine, not a speed figure).
      ok(elapsed < 20_000, `${elapsed} ms`);
      await bridge.request(2, "ping");
      deepStrictEqual((await bridge.response(2)).result, {});
      strictEqual(await bridge.exit(), 0);
      const warns = bridge.bridgeLines.filter((line) => line.includes("warn:"));
      deepStrictEqual(warns.length, 1, bridge.stderr);
      ok(
        warns[0]!.includes(`add "${OTHER}" to sandbox.network.allowedDomains in mcp.json`),
        warns[0],
      );
      ok(!bridge.stderr.includes("secret-path"), "no path of the URL");
      strictEqual(upstream.seen.length, before, "nothing reached the server");
    } finally {
      await t.done();
    }
  },
);

/**
 * A server that signs in, on the test host over HTTPS: oidc-provider and
 * the SDK v2 server behind its resource server, and the command line of the
 * bridge with its own store, redirect port and `--ca-file`.
 */
async function signInWorld() {
  const t = await testDir();
  const certs = await makeCertificates([HOST]);
  const tls = { cert: certs.cert, key: certs.key };
  const provider = await startProvider({ host: HOST, tls });
  // The test itself reaches the provider at 127.0.0.1 (its net permission is loopback only).
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(certs.caFile)] });
  const introspection = {
    url: `https://127.0.0.1:${new URL(provider.issuer).port}/token/introspection`,
    client,
  };
  const resource = startMcpResource(provider.issuer, { host: HOST, tls, introspection });
  const store = `${t.dir}/store`;
  const args = [
    resource.url,
    "--token-store",
    store,
    "--redirect-port",
    String(freePort()),
    "--ca-file",
    certs.caFile,
  ];
  // The test browser of BROWSER, trusting the test CA (DENO_CERT) and reaching the test host.
  const browser = `${t.dir}/browser.sh`;
  await Deno.writeTextFile(
    browser,
    `#!/bin/sh\nexec "${DENO}" run -q --allow-net --allow-env --allow-read --allow-write "${ROOT}tests/fixtures/auth/browser.ts" "$1"\n`,
    { mode: 0o755 },
  );
  const browserLog = `${t.dir}/browser.log`;
  const env = {
    XDG_CONFIG_HOME: t.configHome,
    BROWSER: browser,
    AUTH_BROWSER_LOG: browserLog,
    DENO_CERT: certs.caFile,
  };
  const opens = () => {
    try {
      return Deno.readTextFileSync(browserLog).split("\n").filter((l) => l.includes('"open"'))
        .length;
    } catch {
      return 0;
    }
  };
  const entryFile = () => {
    const file = [...Deno.readDirSync(store)].find((f) => f.name.endsWith(".json"))!;
    return `${store}/${file.name}`;
  };
  const tokens = () =>
    JSON.parse(Deno.readTextFileSync(entryFile())).entry.tokens as {
      accessToken: string;
      refreshToken: string;
      expiresAt: number;
    };
  /** Makes the stored access token expired, as the bridge sees it. */
  const expire = () => {
    const raw = JSON.parse(Deno.readTextFileSync(entryFile()));
    raw.entry.tokens.expiresAt = Date.now() - 1_000;
    Deno.writeTextFileSync(entryFile(), JSON.stringify(raw));
  };
  const leaks = (text: string) =>
    [...provider.secrets, ...resource.tokensSeen].filter((secret) => text.includes(secret));
  return {
    t,
    provider,
    resource,
    store,
    args,
    env,
    opens,
    tokens,
    expire,
    leaks,
    close: async () => {
      await resource.close();
      await provider.close();
      client.close();
      await t.done();
    },
  };
}

/** Runs `login` of the program outside the sandbox. */
async function login(args: readonly string[], env: Record<string, string>) {
  const [command, ...rest] = programArgv(["login", ...args]);
  const out = await new Deno.Command(command!, {
    args: rest,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: testEnv(env),
    clearEnv: true,
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

sandboxTest(
  "login outside, then the sandboxed bridge calls a tool with the stored token from a store it cannot write; an expired token is refreshed inside, written to disk where the store is writable, kept in memory with one warn line where it is not",
  async () => {
    const w = await signInWorld();
    try {
      const signedIn = await login(w.args, w.env);
      strictEqual(signedIn.code, 0, signedIn.stderr);
      strictEqual(w.opens(), 1);
      const stored = w.tokens();
      ok(stored.refreshToken, "a refresh token is stored");

      const doctor = await doctorJson(w.args, w.env);
      const host = new URL(w.provider.issuer).hostname;
      deepStrictEqual(doctor.json.snippet.sandbox, {
        network: { allowedDomains: [HOST] },
        filesystem: { allowWrite: [w.store] },
      });
      strictEqual(host, HOST, "the provider is on the test host too (one domain)");
      const writable = await settingsFrom(w.t.dir, doctor.json.snippet.sandbox, ["127.0.0.1"]);
      const readOnly = await settingsFrom(
        w.t.dir,
        { ...doctor.json.snippet.sandbox, filesystem: { allowWrite: [] } },
        ["127.0.0.1"],
      );

      // 1. The stored token, from a store the sandbox does not let it write.
      const modes = () => [...Deno.readDirSync(w.store)].map((f) => f.name).sort();
      const filesBefore = modes();
      {
        await using bridge = new SandboxedBridge(readOnly, w.args, w.env);
        strictEqual(await echoThrough(bridge, "stored"), "stored");
        strictEqual(await bridge.exit(), 0);
        deepStrictEqual(bridge.bridgeLines.filter((l) => l.includes("warn:")), []);
        deepStrictEqual(w.leaks(bridge.stderr), []);
      }
      ok(w.resource.tokensSeen.has(stored.accessToken), "the stored token was sent");
      deepStrictEqual(modes(), filesBefore, "no file made (no lock, no probe)");
      deepStrictEqual(w.tokens(), stored);

      // 2. Expired, the store writable (doctor's snippet): refreshed inside and written to disk.
      w.expire();
      const hits = () => w.provider.hits.get("/token") ?? 0;
      let before = hits();
      {
        await using bridge = new SandboxedBridge(writable, w.args, w.env);
        strictEqual(await echoThrough(bridge, "fresh"), "fresh");
        strictEqual(await bridge.exit(), 0);
        deepStrictEqual(bridge.bridgeLines.filter((l) => l.includes("warn:")), []);
      }
      strictEqual(hits() - before, 1, "one refresh");
      const refreshed = w.tokens();
      ok(refreshed.accessToken !== stored.accessToken, "the new tokens are on disk");
      ok(refreshed.refreshToken !== stored.refreshToken, "the rotation is on disk");

      // 3. Expired, the store not writable: refreshed, kept in memory, one warn line, the calls work.
      w.expire();
      const onDisk = w.tokens();
      before = hits();
      {
        await using bridge = new SandboxedBridge(readOnly, w.args, w.env);
        strictEqual(await echoThrough(bridge, "kept"), "kept");
        const [again] = (await bridge.call(3, "echo", { text: "again" })).slice(-1);
        deepStrictEqual((again?.result as { content: unknown }).content, [
          { type: "text", text: "again" },
        ]);
        strictEqual(await bridge.exit(), 0);
        const warns = bridge.bridgeLines.filter((l) => l.includes("warn:"));
        strictEqual(warns.length, 1, bridge.stderr);
        ok(
          warns[0]!.includes(
            `add ${w.store} to sandbox.filesystem.allowWrite in mcp.json to keep them`,
          ),
          warns[0],
        );
        deepStrictEqual(w.leaks(bridge.stderr), []);
      }
      strictEqual(hits() - before, 1, "one refresh: the second call used the kept token");
      deepStrictEqual(w.tokens(), onDisk, "the store is unchanged");
      strictEqual(w.opens(), 1, "no browser in the sandbox");
    } finally {
      await w.close();
    }
  },
);

sandboxTest(
  "a needed new sign-in is the sandbox error at once, without a browser and without a write",
  async () => {
    const w = await signInWorld();
    try {
      const doctor = await doctorJson(w.args, w.env);
      strictEqual(doctor.code, 1, "doctor: the sign-in would break");
      const settings = await settingsFrom(w.t.dir, doctor.json.snippet.sandbox, ["127.0.0.1"]);
      await using bridge = new SandboxedBridge(settings, w.args, w.env);
      const started = performance.now();
      const response = await bridge.initialize();
      const elapsed = performance.now() - started;
      const error = response.error as { message: string; data: { cause: string } };
      strictEqual(error.data.cause, "sandbox");
      // At once: far below --discover-timeout (60 s), which a wait for the refused host would
      // reach (a bound for a loaded machine, not a speed figure).
      ok(elapsed < 20_000, `${elapsed} ms`);
      await bridge.request(2, "ping");
      deepStrictEqual((await bridge.response(2)).result, {});
      strictEqual(await bridge.exit(), 0);
      strictEqual(w.opens(), 0);
      ok(!exists(w.store), "the store was not made");
      ok(bridge.bridgeLines.some((l) => l.includes("login URL")), bridge.stderr);
    } finally {
      await w.close();
    }
  },
);
