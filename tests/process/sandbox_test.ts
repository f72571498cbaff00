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
import { ROOT } from "./helpers.ts";
import {
  doctorJson,
  type McpSandbox,
  SandboxedBridge,
  SRT_MISSING,
  TestHosts,
  vscodeSettings,
  writeSettings,
} from "./srt.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { sdkHandler, serveRaw, type Upstream } from "../fixtures/http_upstream.ts";

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
  "a domain that is not allowed: discover_failed with the proxy's detail within 2 s, one warn line with the rule, and ping still answers",
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
      ok(elapsed < 2_000, `${elapsed} ms`);
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
