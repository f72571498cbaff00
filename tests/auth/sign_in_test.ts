import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { SignIn } from "../../lib/auth/sign_in.ts";
import { StoreError, TokenStore } from "../../lib/auth/store.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { visit } from "../fixtures/auth/browser.ts";
import { startHostile } from "../fixtures/auth/hostile_server.ts";
import { waitFor } from "../wait.ts";
import { call, failsWith, FAST_LOCK, noLeaks, setup, type World } from "./harness.ts";
import { freePort } from "../free_port.ts";

/** `promise`, or a rejection after `ms`: a request that hangs fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function causeOf(error: unknown): string | undefined {
  return error instanceof UpstreamFailure ? error.signIn?.cause : undefined;
}

/** The authorization server forgets the grant: the next refresh gets invalid_grant. */
async function revokeRefresh(world: World): Promise<void> {
  const entry = await world.store.read(world.resource.url);
  const revoked = await fetch(`${world.provider.issuer}/token/revocation`, {
    method: "POST",
    body: new URLSearchParams({ token: entry.tokens!.refreshToken!, client_id: entry.clientId! }),
  });
  strictEqual(revoked.status, 200);
  await revoked.body?.cancel();
}

Deno.test("first sign-in then a call: one browser, tokens stored 0600 in a 0700 directory", async () => {
  const world = await setup();
  try {
    const response = await call(world);
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.opened.length, 1);
    ok(world.opened[0]!.startsWith(`http://127.0.0.1:${world.port}/start/`));
    const [visit] = await Promise.all(world.visits);
    ok(visit!.text.includes("The sign-in is done"), visit!.text);
    const entry = await world.store.read(world.resource.url);
    strictEqual(entry.issuer, world.provider.issuer);
    ok(entry.tokens?.refreshToken);
    strictEqual(entry.clients.length, 1);
    strictEqual(world.provider.registered.length, 1);
    strictEqual((await Deno.stat(world.store.dir)).mode! & 0o777, 0o700);
    for await (const file of Deno.readDir(world.store.dir)) {
      strictEqual((await Deno.stat(`${world.store.dir}/${file.name}`)).mode! & 0o777, 0o600);
    }
    // The one log line that tells the user where to sign in.
    ok(world.log.some((line) => line.includes("info:") && line.includes(world.opened[0]!)));
    // The authorization request had PKCE S256, state, resource and the scope of the challenge.
    await noLeaks(world);
  } finally {
    await world.close();
  }
});

Deno.test("a restart reuses the stored token without a browser", async () => {
  const world = await setup();
  try {
    await (await call(world)).body?.cancel();
    const restarted = world.again();
    const response = await call({ source: restarted.source, resource: world.resource });
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(restarted.opened.length, 0);
    strictEqual(world.provider.registered.length, 1);
  } finally {
    await world.close();
  }
});

Deno.test("a token that expires within a minute is refreshed, and the rotation is stored", async () => {
  const world = await setup({ provider: { accessTokenTtl: 30 } });
  try {
    await (await call(world)).body?.cancel();
    const before = (await world.store.read(world.resource.url)).tokens!;
    const response = await call(world);
    strictEqual(response.status, 200);
    await response.body?.cancel();
    const after = (await world.store.read(world.resource.url)).tokens!;
    ok(after.accessToken !== before.accessToken);
    ok(after.refreshToken !== before.refreshToken, "the refresh token rotates");
    strictEqual(world.opened.length, 1);
    ok(world.log.some((line) => line.includes("refreshed")));
    await noLeaks(world);
  } finally {
    await world.close();
  }
});

/**
 * The store as VS Code's sandbox shows it without the folder in allowWrite:
 * reads work, every write and lock fails (as root a mode does not stop a
 * write, so the failure is made here; tests/process/sandbox_test.ts has the
 * real read-only file system of srt).
 */
function readOnlyView(store: TokenStore): TokenStore {
  const refuse = () =>
    Promise.reject(new StoreError(`the token store ${store.dir} cannot be written`));
  return {
    dir: store.dir,
    read: (url: string) => store.read(url),
    write: refuse,
    remove: refuse,
    withLock: refuse,
  } as unknown as TokenStore;
}

Deno.test("a refresh that the store cannot take is kept in memory: one warn line with the folder for allowWrite, and the next refresh uses the rotated token", async () => {
  const world = await setup({ provider: { accessTokenTtl: 30 } });
  try {
    await (await call(world)).body?.cancel();
    const onDisk = (await world.store.read(world.resource.url)).tokens!;
    const boxed = world.again({ store: readOnlyView(world.store), sandbox: true });
    const hits = () => world.provider.hits.get("/token") ?? 0;
    const before = hits();
    for (let i = 0; i < 3; i++) {
      const response = await call({ source: boxed.source, resource: world.resource });
      strictEqual(response.status, 200);
      await response.body?.cancel();
    }
    // Each call refreshes (the tokens live 30 s, under the minute of the margin); a stale
    // refresh token from the disk would be refused after the first rotation.
    strictEqual(hits() - before, 3);
    strictEqual(boxed.opened.length, 0, "no sign-in");
    const warns = boxed.log.filter((line) => line.includes("warn:"));
    deepStrictEqual(warns.length, 1, warns.join("\n"));
    ok(
      warns[0]!.includes(
        `the token store ${world.store.dir} cannot be written: the refreshed tokens are kept in memory until the server stops; add ${world.store.dir} to sandbox.filesystem.allowWrite in mcp.json to keep them`,
      ),
      warns[0],
    );
    deepStrictEqual((await world.store.read(world.resource.url)).tokens, onDisk, "unchanged");
    await noLeaks(world);
  } finally {
    await world.close();
  }
});

Deno.test("a store that cannot be read gives no token and no failure until a challenge", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-unreadable-" });
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    const log: string[] = [];
    const source = new SignIn({
      serverUrl: "https://mcp.example/mcp",
      store: TokenStore.at(`${dir}/file/store`),
      redirectPort: freePort(),
      signInTimeoutMs: 1_000,
      noBrowser: true,
      sandbox: true,
      name: "mcp-bridge-vscode",
      logger: createLogger("test", "debug", (line) => log.push(line)),
      openBrowser: () => Promise.resolve(false),
    });
    strictEqual(await source.authorization(new AbortController().signal), undefined);
    strictEqual(await source.hasUsableToken(), false);
    await rejects(
      source.challenge(
        { status: 401, wwwAuthenticate: undefined },
        1,
        new AbortController().signal,
      ),
      (error) => causeOf(error) === "sandbox",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refresh that fails asks again through the URL prompt; declined is reauthorization_required", async () => {
  const world = await setup({ provider: { accessTokenTtl: 30 } });
  try {
    await (await call(world)).body?.cancel();
    await revokeRefresh(world);
    const prompted: string[] = [];
    world.source.setUrlPrompt((url, message) => {
      prompted.push(url);
      ok(message.length > 0);
      world.visits.push(import("../fixtures/auth/browser.ts").then((b) => b.visit(url, "login")));
      return Promise.resolve("accept");
    });
    const response = await call(world);
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(prompted.length, 1);
    strictEqual(world.opened.length, 1, "the prompt replaced the browser");
    ok(world.log.some((line) => line.includes("warn:") && line.includes("HTTP status 400")));
    await revokeRefresh(world);
    world.source.setUrlPrompt(() => Promise.resolve("decline"));
    const failure = await failsWith(call(world), "reauthorization_required");
    strictEqual(failure.signIn?.detail, "declined");
    await noLeaks(world);
  } finally {
    await world.close();
  }
});

Deno.test("no redirect in the time limit is sign_in_timeout with the seconds and the name", async () => {
  const world = await setup({ mode: "idle", settings: { signInTimeoutMs: 1000 } });
  try {
    const failure = await failsWith(call(world), "sign_in_timeout");
    deepStrictEqual(failure.signIn?.placeholders, { seconds: 1, name: "mcp-bridge-vscode" });
    // The listener is gone: the port is free again. (Another test of the run may hold the
    // port for a moment, as it was free when the world took it: a few tries.)
    await waitFor("the redirect port to be free", () => {
      try {
        Deno.listen({ hostname: "127.0.0.1", port: world.port }).close();
        return true;
      } catch {
        return false;
      }
    }, { timeoutMs: 3_000, intervalMs: 50 });
  } finally {
    await world.close();
  }
});

Deno.test("a 403 insufficient_scope gets one step-up; a second challenge is access_refused", async () => {
  const world = await setup({ policy: { stepUpMarker: "write", stepUpScope: "mcp:write" } });
  try {
    await (await call(world)).body?.cancel();
    const response = await call(world, '{"write":1}');
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.opened.length, 2, "the step-up is a new authorization");
    ok((await world.store.read(world.resource.url)).tokens?.scope?.includes("mcp:write"));
    world.resource.policy.refuseStepUp = true;
    const failure = await failsWith(call(world, '{"write":2}'), "access_refused");
    strictEqual(failure.signIn?.detail, "HTTP status 403");
    strictEqual(failure.status, 403);
    strictEqual(world.opened.length, 3);
  } finally {
    await world.close();
  }
});

Deno.test("SANDBOX_RUNTIME=1: a needed sign-in fails at once with sandbox", async () => {
  const world = await setup({ settings: { sandbox: true } });
  try {
    await failsWith(call(world), "sandbox");
    strictEqual(world.opened.length, 0);
    strictEqual(world.provider.hits.size, 0, "not even discovery");
  } finally {
    await world.close();
  }
});

Deno.test("two bridges at once open one browser and register one client", async () => {
  const first = await setup();
  const second = first.again();
  try {
    const [a, b] = await Promise.all([
      call(first),
      call({ source: second.source, resource: first.resource }),
    ]);
    strictEqual(a.status, 200);
    strictEqual(b.status, 200);
    await a.body?.cancel();
    await b.body?.cancel();
    strictEqual(first.opened.length + second.opened.length, 1);
    strictEqual(first.provider.registered.length, 1);
  } finally {
    await Promise.all(second.visits);
    await first.close();
  }
});

Deno.test("nextSignIn resolves at the next sign-in that succeeds", async () => {
  const world = await setup();
  try {
    let resolved = false;
    const next = world.source.nextSignIn().then(() => resolved = true);
    strictEqual(resolved, false);
    await (await call(world)).body?.cancel();
    await next;
    ok(resolved);
  } finally {
    await world.close();
  }
});

Deno.test("a sign-in stuck at the token endpoint ends at its limit, and the next one does not wait on it", async () => {
  const server = startHostile({ at: "token", how: "silent" });
  const dir = await Deno.makeTempDir({ prefix: "auth-limits-" });
  const visits: Promise<unknown>[] = [];
  try {
    const source = new SignIn({
      serverUrl: server.url,
      store: await TokenStore.open(`${dir}/store`, FAST_LOCK),
      redirectPort: freePort(),
      signInTimeoutMs: 1_500,
      noBrowser: false,
      sandbox: false,
      name: "mcp-bridge-vscode",
      logger: createLogger("test", "error", () => {}),
      openBrowser: (url) => {
        visits.push(visit(url, "login"));
        return Promise.resolve(true);
      },
    });
    const challenge = {
      status: 401,
      wwwAuthenticate:
        `Bearer resource_metadata="${server.origin}/.well-known/oauth-protected-resource/mcp"`,
    };
    // Both requests have the hour of a tools/call.
    const hour = AbortSignal.timeout(3_600_000);
    const start = Date.now();
    const first = source.challenge(challenge, 1, hour).catch((error) => error);
    // The second starts once the first waits at the token endpoint.
    await waitFor("the first token request", () => server.hits.get("/token") === 1);
    const second = source.challenge(challenge, 1, hour).then(() => "retry", (error) => error);
    strictEqual(causeOf(await within(first, 8_000)), "sign_in_timeout");
    const firstMs = Date.now() - start;
    ok(firstMs >= 1_400 && firstMs < 4_000, `${firstMs} ms`);
    await within(second, 8_000);
    ok(Date.now() - start < 4_000, "the second request waited for the first only");
    strictEqual(server.hits.get("/token"), 1);
    ok(
      await (async () => {
        const deadline = Date.now() + 3_000;
        while (server.open() > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
        }
        return server.open() === 0;
      })(),
      "the connection of the token request is closed",
    );
  } finally {
    await Promise.allSettled(visits);
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refresh whose token endpoint never answers is sign_in_timeout, and the tokens stay", async () => {
  const server = startHostile({ at: "token", how: "silent" });
  const dir = await Deno.makeTempDir({ prefix: "auth-limits-" });
  try {
    const store = await TokenStore.open(`${dir}/store`, FAST_LOCK);
    const port = freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const entry = {
      issuer: server.origin,
      clientId: "hostile-client",
      resource: server.url,
      clients: [{ issuer: server.origin, redirectUri, client: { client_id: "hostile-client" } }],
      tokens: {
        accessToken: "old-access-0123456789",
        tokenType: "Bearer",
        refreshToken: "old-refresh-0123456789",
        expiresAt: Date.now() - 1_000,
      },
    };
    await store.write(server.url, entry);
    const source = new SignIn({
      serverUrl: server.url,
      store,
      redirectPort: port,
      signInTimeoutMs: 1_000,
      noBrowser: true,
      sandbox: true,
      name: "mcp-bridge-vscode",
      logger: createLogger("test", "error", () => {}),
      openBrowser: () => Promise.resolve(false),
    });
    const start = Date.now();
    let caught: unknown;
    await rejects(within(source.authorization(AbortSignal.timeout(3_600_000)), 8_000), (error) => {
      caught = error;
      return true;
    });
    strictEqual(causeOf(caught), "sign_in_timeout");
    ok(Date.now() - start < 3_000, `${Date.now() - start} ms`);
    strictEqual(server.hits.get("/token"), 1);
    strictEqual((await store.read(server.url)).tokens?.refreshToken, "old-refresh-0123456789");
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
