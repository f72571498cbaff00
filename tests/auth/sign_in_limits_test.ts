import { waitFor } from "../wait.ts";
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { SignIn } from "../../lib/auth/sign_in.ts";
import { signInFetch, SignInHttp } from "../../lib/auth/sign_in_fetch.ts";
import { TokenStore } from "../../lib/auth/store.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { visit } from "../fixtures/auth/browser.ts";
import { startHostile } from "../fixtures/auth/hostile_server.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { FAST_LOCK, freePort } from "./harness.ts";

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

Deno.test("a response larger than the limit fails: by its content-length, or cut off in its body", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    if (new URL(request.url).pathname === "/stream") {
      // Chunked: no content-length to check before the body.
      const chunk = new TextEncoder().encode("x".repeat(512));
      return new Response(
        new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }),
        { headers: { "content-type": "application/json" } },
      );
    }
    return new Response("x".repeat(2048), { headers: { "content-type": "application/json" } });
  });
  try {
    const http = new SignInHttp({ signal: AbortSignal.timeout(5_000), maxBytes: 1024 });
    const step = http.step("authorization server metadata");
    await rejects(step.fetch(`http://127.0.0.1:${server.addr.port}/`));
    strictEqual(
      step.detail(),
      "authorization server metadata: HTTP status 200, a response larger than 1 KiB",
    );
    strictEqual(causeOf(step.failure()), "sign_in_failed");
    const streamed = http.step("token request");
    const response = await streamed.fetch(`http://127.0.0.1:${server.addr.port}/stream`);
    await rejects(response.text());
    strictEqual(streamed.detail(), "token request: HTTP status 200, a response larger than 1 KiB");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a request to an http endpoint that is not loopback fails before it is sent", async () => {
  let sent = 0;
  const http = new SignInHttp({
    signal: AbortSignal.timeout(5_000),
    fetch: () => {
      sent += 1;
      return Promise.resolve(new Response("{}"));
    },
  });
  const step = http.step("revocation");
  await rejects(step.fetch("http://auth.invalid.test/revoke"), (error) => {
    strictEqual(causeOf(error), "sign_in_failed");
    strictEqual((error as UpstreamFailure).signIn?.detail, "revocation: the endpoint is not https");
    return true;
  });
  for (
    const url of ["https://auth.invalid.test/revoke", "http://127.0.0.1:9/", "http://localhost:9/"]
  ) {
    await (await step.fetch(url)).body?.cancel();
  }
  strictEqual(sent, 3);
  // The resource server's own metadata is not the authorization server's.
  await (await http.step("protected resource metadata").fetch("http://mcp.invalid.test/x")).text();
  strictEqual(sent, 4);
});

Deno.test("the requests of the sign-in trust the CA of --ca-file (the link's HTTP client settings)", async () => {
  const certs = await makeCertificates();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: certs.cert,
    key: certs.key,
    onListen: () => {},
  }, () => Response.json({ ok: true }));
  try {
    const url = `https://127.0.0.1:${server.addr.port}/.well-known/oauth-authorization-server`;
    const signal = AbortSignal.timeout(10_000);
    const trusted = new SignInHttp({
      signal,
      fetch: signInFetch([await Deno.readTextFile(certs.caFile)]),
    }).step("authorization server metadata");
    deepStrictEqual(await (await trusted.fetch(url)).json(), { ok: true });
    const plain = new SignInHttp({ signal, fetch: signInFetch(undefined) }).step(
      "authorization server metadata",
    );
    await rejects(plain.fetch(url));
    strictEqual(plain.detail(), "authorization server metadata: no response");
  } finally {
    await server.shutdown();
    await Deno.remove(certs.dir, { recursive: true });
  }
});
