/**
 * The paste fallback of `login` (issue 32): `login --no-browser` in process,
 * with oidc-provider, a "terminal" whose stdin the test writes, and a test
 * browser "on another machine" that opens the printed authorization URL and
 * stops at the redirect, which it does not load (so the listener gets no
 * request). tests/process/login_test.ts runs the same through the program.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type LoginTerminal, runLogin } from "../../lib/auth/login.ts";
import { MAX_PASTE_CHARS, pastedAddress } from "../../lib/auth/paste.ts";
import { TokenStore } from "../../lib/auth/store.ts";
import { parseLogin } from "../../lib/cli/command_line.ts";
import { createLogger } from "../../lib/log.ts";
import { portIsFree } from "../../lib/net/loopback.ts";
import { visit } from "../fixtures/auth/browser.ts";
import { startMcpResource } from "../fixtures/auth/mcp_resource.ts";
import { startProvider } from "../fixtures/auth/provider.ts";
import { freePort } from "../free_port.ts";
import { call, setup } from "./harness.ts";
import { waitFor } from "../wait.ts";

const enc = new TextEncoder();

/** A terminal of `login`: stdin that the test writes, and everything login writes, in order. */
function testTerminal() {
  const output: string[] = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { opened: 0, cancelled: false };
  const stdin = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (state.cancelled = true),
  });
  const terminal: LoginTerminal = {
    input: () => {
      state.opened += 1;
      return stdin;
    },
    write: (text) => output.push(text),
  };
  return {
    terminal,
    output,
    state,
    log: createLogger("t", "info", (line) => output.push(line)),
    text: () => output.join(""),
    paste: (text: string) => controller.enqueue(enc.encode(text)),
    end: () => controller.close(),
  };
}

/**
 * Counts the requests that reach the redirect listener on `port`: a spy on
 * `Deno.serve` (the listener's server) that passes every request on.
 * `restore` puts `Deno.serve` back.
 */
function spyListener(port: number): { readonly requests: string[]; restore(): void } {
  const serve = Deno.serve;
  const requests: string[] = [];
  const spy = ((options: Deno.ServeTcpOptions, handler: Deno.ServeHandler<Deno.NetAddr>) =>
    serve(
      options,
      options.port === port
        ? (request, info) => {
          requests.push(new URL(request.url).pathname);
          return handler(request, info);
        }
        : handler,
    )) as typeof Deno.serve;
  Deno.serve = spy;
  return { requests, restore: () => void (Deno.serve = serve) };
}

/** The servers, a store, and a `login --no-browser` running with a test terminal. */
async function startLogin(extra: string[] = []) {
  const provider = await startProvider();
  const resource = startMcpResource(provider.issuer);
  const dir = await Deno.makeTempDir({ prefix: "paste-test-" });
  const port = freePort();
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const command = parseLogin(
    [
      resource.url,
      "--token-store",
      `${dir}/store`,
      "--redirect-port",
      String(port),
      "--no-browser",
      ...extra,
    ],
    () => undefined,
  );
  const t = testTerminal();
  const listener = spyListener(port);
  let exit: number | undefined;
  const running = runLogin(command, t.log, () => undefined, t.terminal).then((code) => {
    exit = code;
    return code;
  });
  // The authorization URL: a line of its own, at the provider.
  const authorizationUrl = await waitFor(
    "the authorization URL",
    () => t.output.find((line) => line.startsWith(`${provider.issuer}/`))?.trim(),
  );
  const startUrl = t.text().match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0];
  return {
    provider,
    resource,
    port,
    redirectUri,
    t,
    running,
    exited: () => exit !== undefined,
    authorizationUrl,
    startUrl: startUrl!,
    warnings: () => t.output.filter((line) => line.includes("] warn: ")),
    /** The paths that the redirect listener was asked for. */
    listenerRequests: listener.requests,
    tokens: async () => (await (await TokenStore.open(`${dir}/store`)).read(resource.url)).tokens,
    close: async () => {
      listener.restore();
      await resource.close();
      await provider.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The redirect address of a browser on another machine, which does not load it. */
async function remoteRedirect(authorizationUrl: string, redirectUri: string): Promise<string> {
  const seen = await visit(authorizationUrl, "login", { landing: redirectUri });
  ok(seen.landed, JSON.stringify(seen));
  // The browser never reached the listener: its last hop is the redirect it did not load.
  strictEqual(seen.hops.filter((hop) => hop.startsWith(redirectUri)).length, 1);
  return seen.landed;
}

Deno.test("paste: login --no-browser prints the authorization URL; a pasted redirect completes the sign-in without the listener, and every other line gets one warn line", async () => {
  const w = await startLogin();
  try {
    const line = w.t.output.find((l) => l.includes("with a browser on another machine"));
    ok(line?.includes(w.redirectUri), w.t.text());
    ok(w.startUrl, "the start URL is printed too");
    const landed = await remoteRedirect(w.authorizationUrl, w.redirectUri);
    const url = new URL(landed);
    const code = url.searchParams.get("code")!;
    const state = url.searchParams.get("state")!;
    ok(code && state);
    const tampered = new URL(landed);
    tampered.searchParams.set("state", `${state.slice(0, -4)}AAAA`);
    const elsewhere = new URL(landed);
    elsewhere.pathname = "/elsewhere";

    w.t.paste("\n   \n");
    w.t.paste("some garbage 42\n");
    w.t.paste(`${elsewhere.href}\n`);
    w.t.paste(`${tampered.href}\n`);
    // A line over the limit: one warn line, and its rest up to its end is dropped.
    w.t.paste("x".repeat(MAX_PASTE_CHARS + 10));
    w.t.paste("the rest of the long line\n");
    w.t.paste("x".repeat(100) + "\n");
    await waitFor("five warn lines", () => w.warnings().length === 5);
    const warnings = w.warnings();
    ok(warnings[0]!.includes("not an address"), warnings[0]);
    ok(warnings[1]!.includes("not the redirect of the sign-in"), warnings[1]);
    ok(warnings[2]!.includes("not the redirect of this sign-in"), warnings[2]);
    ok(warnings[3]!.includes("is not read"), warnings[3]);
    ok(warnings[4]!.includes("not an address"), warnings[4]);
    for (const warning of warnings) strictEqual(warning.split("\n").length, 2, warning);
    strictEqual(w.exited(), false, "login waits on");

    // Pasted as a terminal of Windows sends it, with spaces around.
    w.t.paste(`  ${landed}  \r\n`);
    strictEqual(await w.running, 0, w.t.text());
    ok((await w.tokens())?.accessToken, "the tokens are stored");
    deepStrictEqual(w.listenerRequests, [], "the listener got no request");
    ok(w.t.state.cancelled, "the reading of stdin stopped");
    strictEqual(w.t.state.opened, 1);
    ok(portIsFree(w.port), "the listener closed");
    const text = w.t.text();
    ok(text.includes("the tokens are stored"), text);
    // Nothing pasted is in the output: the code, the tampered state, the addresses.
    for (const pasted of [code, tampered.searchParams.get("state")!, landed, elsewhere.href]) {
      ok(!text.includes(pasted), `the output shows a pasted value: ${text}`);
    }
    ok(!text.includes("some garbage") && !text.includes("x".repeat(50)), text);
    ok(!text.includes("the rest of the long line"), text);
    // The right state is only in the printed authorization URL.
    strictEqual(text.split(state).length, 2, "the state once, in the authorization URL");
    deepStrictEqual(
      [...w.provider.secrets, ...w.resource.tokensSeen].filter((s) => text.includes(s)),
      [],
    );
  } finally {
    await w.close();
  }
});

Deno.test("paste: a pasted error redirect is one warn line and login waits; the end of stdin leaves the listener waiting, and the browser completes the sign-in", async () => {
  const w = await startLogin();
  try {
    w.provider.faults.authorizationError = "access_denied";
    const denied = await remoteRedirect(w.authorizationUrl, w.redirectUri);
    ok(new URL(denied).searchParams.get("error") === "access_denied", "an error redirect");
    w.provider.faults.authorizationError = "temporarily_unavailable";
    const failed = await remoteRedirect(w.authorizationUrl, w.redirectUri);
    delete w.provider.faults.authorizationError;
    w.t.paste(`${denied}\n${failed}\n`);
    await waitFor("two warn lines", () => w.warnings().length === 2);
    ok(w.warnings()[0]!.includes("refused the access"), w.warnings()[0]);
    ok(w.warnings()[1]!.includes("sent the error temporarily_unavailable"), w.warnings()[1]);
    w.t.end();
    strictEqual(w.exited(), false, "login waits on");

    deepStrictEqual(w.listenerRequests, [], "nothing reached the listener before the browser");
    const seen = await visit(w.startUrl, "login");
    ok(seen.text.includes("The sign-in is done"), seen.text);
    strictEqual(await w.running, 0, w.t.text());
    deepStrictEqual(w.listenerRequests, [new URL(w.startUrl).pathname, "/callback"]);
    ok((await w.tokens())?.accessToken);
    ok(!w.t.text().includes(denied) && !w.t.text().includes(failed), w.t.text());
  } finally {
    await w.close();
  }
});

Deno.test("paste: after a tampered state, --sign-in-timeout ends login (exit 1, one error line) and frees the port", async () => {
  const w = await startLogin(["--sign-in-timeout", "2"]);
  try {
    w.t.paste(`${w.redirectUri}?code=abcdefgh12345678&state=not-the-state\n`);
    await waitFor("a warn line", () => w.warnings().length === 1);
    ok(w.warnings()[0]!.includes("not the redirect of this sign-in"), w.warnings()[0]);
    strictEqual(await w.running, 1);
    const errors = w.t.output.filter((line) => line.includes("] error: "));
    strictEqual(errors.length, 1, w.t.text());
    ok(errors[0]!.includes("login failed") && errors[0]!.includes("2 s"), errors[0]);
    ok(w.t.state.cancelled, "the reading of stdin stopped");
    ok(portIsFree(w.port), "the listener closed");
    ok(!w.t.text().includes("abcdefgh12345678") && !w.t.text().includes("not-the-state"));
  } finally {
    await w.close();
  }
});

for (
  const [what, change] of [["is another issuer", "https://mix-up.example"], [
    "is cut off",
    undefined,
  ]] as const
) {
  Deno.test(`paste: a pasted redirect whose iss ${what} ends the sign-in (the check of the listener's redirect)`, async () => {
    const w = await startLogin();
    try {
      const landed = new URL(await remoteRedirect(w.authorizationUrl, w.redirectUri));
      ok(landed.searchParams.get("iss"), "oidc-provider sends iss (RFC 9207)");
      if (change === undefined) landed.searchParams.delete("iss");
      else landed.searchParams.set("iss", change);
      w.t.paste(`${landed.href}\n`);
      strictEqual(await w.running, 1);
      const errors = w.t.output.filter((line) => line.includes("] error: "));
      strictEqual(errors.length, 1, w.t.text());
      ok(errors[0]!.includes("the issuer of the redirect does not match"), errors[0]);
      strictEqual(await w.tokens(), undefined);
      ok(!w.t.text().includes(landed.searchParams.get("code")!), w.t.text());
    } finally {
      await w.close();
    }
  });
}

Deno.test("paste: an address is a URL, or the same without http://", () => {
  strictEqual(pastedAddress("http://127.0.0.1:1/callback?code=a")?.pathname, "/callback");
  strictEqual(
    pastedAddress("127.0.0.1:1/callback?code=a")?.href,
    "http://127.0.0.1:1/callback?code=a",
  );
  strictEqual(pastedAddress("localhost:1/callback"), undefined);
  strictEqual(pastedAddress("code=abc&state=def"), undefined);
  strictEqual(pastedAddress("javascript:alert(1)"), undefined);
  strictEqual(pastedAddress("not an address"), undefined);
});

Deno.test("paste: the bridge (a sign-in of a challenge, as under VS Code) with --no-browser keeps the start URL alone: no authorization URL, no paste", async () => {
  const world = await setup({ settings: { noBrowser: true } });
  try {
    const pending = call(world);
    const startUrl = await waitFor(
      "the start URL in the log",
      () => world.log.join("").match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0],
    );
    const seen = await visit(startUrl, "login");
    ok(seen.text.includes("The sign-in is done"), seen.text);
    strictEqual((await pending).status, 200);
    const log = world.log.join("");
    ok(!log.includes(`${world.provider.issuer}/`), log);
    ok(!log.includes("another machine"), log);
  } finally {
    await world.close();
  }
});
