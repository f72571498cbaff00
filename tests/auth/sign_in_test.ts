import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { authorizationUrlIsValid } from "../../lib/auth/checks.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { call, leaks, setup, type World } from "./harness.ts";

/** Rejects with the sign-in failure of `cause`; returns it. */
async function failsWith(promise: Promise<unknown>, cause: string): Promise<UpstreamFailure> {
  let caught: unknown;
  await rejects(promise, (error) => {
    caught = error;
    return true;
  });
  ok(caught instanceof UpstreamFailure, `not an UpstreamFailure: ${caught}`);
  strictEqual(caught.kind, "sign_in");
  strictEqual(caught.signIn?.cause, cause);
  return caught;
}

async function noLeaks(world: World): Promise<void> {
  const text = world.log.join("");
  deepStrictEqual(leaks(world, text), []);
  // The browser pages must not show them either.
  for (const visit of await Promise.all(world.visits)) {
    deepStrictEqual(leaks(world, visit.text), []);
  }
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

Deno.test("access denied at the consent is sign_in_denied, and the page says so", async () => {
  const world = await setup({ mode: "deny" });
  try {
    await failsWith(call(world), "sign_in_denied");
    const [visit] = await Promise.all(world.visits);
    ok(visit!.text.includes("refused the access"), visit!.text);
  } finally {
    await world.close();
  }
});

Deno.test("another redirect error is sign_in_error with its code", async () => {
  const world = await setup();
  world.provider.faults.authorizationError = "temporarily_unavailable";
  try {
    const failure = await failsWith(call(world), "sign_in_error");
    strictEqual(failure.signIn?.detail, "temporarily_unavailable");
  } finally {
    await world.close();
  }
});

Deno.test("a token request that fails is sign_in_failed with the step and the HTTP status", async () => {
  const world = await setup();
  world.provider.faults.token = 503;
  try {
    const failure = await failsWith(call(world), "sign_in_failed");
    strictEqual(failure.signIn?.detail, "token request: HTTP status 503");
    const [visit] = await Promise.all(world.visits);
    ok(visit!.text.includes("did not complete"), visit!.text);
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
    // The listener is gone: the port is free again.
    Deno.listen({ hostname: "127.0.0.1", port: world.port }).close();
  } finally {
    await world.close();
  }
});

Deno.test("a redirect port in use is redirect_port_unavailable with the port", async () => {
  const world = await setup();
  const squatter = Deno.listen({ hostname: "127.0.0.1", port: world.port });
  try {
    const failure = await failsWith(call(world), "redirect_port_unavailable");
    deepStrictEqual(failure.signIn?.placeholders, { port: String(world.port) });
    strictEqual(world.opened.length, 0);
  } finally {
    squatter.close();
    await world.close();
  }
});

Deno.test("a start URL opened twice stops the sign-in with sign_in_start_reused", async () => {
  const world = await setup({ mode: "twice" });
  try {
    const failure = await failsWith(call(world), "sign_in_start_reused");
    strictEqual(failure.signIn?.detail, undefined);
    const [visit] = await Promise.all(world.visits);
    strictEqual(visit!.status, 409);
  } finally {
    await world.close();
  }
});

Deno.test("an authorization URL that is not https is sign_in_invalid_url and is not opened", async () => {
  const world = await setup();
  world.provider.faults.authorizationEndpoint = "http://auth.example.test/authorize";
  try {
    await failsWith(call(world), "sign_in_invalid_url");
    strictEqual(world.opened.length, 0);
  } finally {
    await world.close();
  }
});

Deno.test("the checks of an authorization URL: state, redirect URI, PKCE S256", () => {
  const good =
    "https://as.example/authorize?response_type=code&state=S&redirect_uri=R&code_challenge=C&code_challenge_method=S256";
  ok(authorizationUrlIsValid(new URL(good), "S", "R"));
  ok(
    authorizationUrlIsValid(
      new URL(good.replace("https://as.example", "http://127.0.0.1:9")),
      "S",
      "R",
    ),
  );
  ok(!authorizationUrlIsValid(new URL(good), "other", "R"), "not our state");
  ok(!authorizationUrlIsValid(new URL(good.replace("state=S&", "")), "S", "R"), "no state");
  ok(
    !authorizationUrlIsValid(new URL(good), "S", "http://127.0.0.1:1/callback"),
    "not our redirect",
  );
  ok(!authorizationUrlIsValid(new URL(good.replace("S256", "plain")), "S", "R"), "plain PKCE");
  ok(
    !authorizationUrlIsValid(new URL(good.replace("https", "http")), "S", "R"),
    "http, not loopback",
  );
});

Deno.test("CIMD: --client-metadata-url is the client ID, without a registration", async () => {
  const cimd = "https://client.example.test/mcp-bridge-vscode.json";
  const port = (await import("./harness.ts")).freePort();
  const world = await setup({
    provider: {
      clients: [{
        client_id: cimd,
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ["authorization_code", "refresh_token"],
      }],
    },
    settings: { clientMetadataUrl: cimd, redirectPort: port },
  });
  world.provider.faults.cimd = true;
  try {
    const response = await call(world);
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.provider.hits.get("/reg") ?? 0, 0);
    strictEqual((await world.store.read(world.resource.url)).clientId, cimd);
  } finally {
    await world.close();
  }
});

Deno.test("a --client-metadata-url that is not https with a path is invalid_client_metadata_url", async () => {
  const world = await setup({ settings: { clientMetadataUrl: "https://client.example.test/" } });
  try {
    await failsWith(call(world), "invalid_client_metadata_url");
  } finally {
    await world.close();
  }
});

Deno.test("a refused registration is registration_failed with the status, the code and the redirect URI", async () => {
  const world = await setup();
  world.provider.faults.registration = { status: 400, error: "invalid_redirect_uri" };
  try {
    const failure = await failsWith(call(world), "registration_failed");
    strictEqual(failure.signIn?.detail, "HTTP status 400, invalid_redirect_uri");
    deepStrictEqual(failure.signIn?.placeholders, {
      redirect_uri: `http://127.0.0.1:${world.port}/callback`,
    });
    strictEqual(world.opened.length, 0);
  } finally {
    await world.close();
  }
});

Deno.test("no registration possible is registration_unavailable", async () => {
  const world = await setup();
  world.provider.faults.noRegistration = true;
  try {
    const failure = await failsWith(call(world), "registration_unavailable");
    deepStrictEqual(failure.signIn?.placeholders, {
      redirect_uri: `http://127.0.0.1:${world.port}/callback`,
    });
  } finally {
    await world.close();
  }
});

Deno.test("--client-id with a wrong --client-issuer is issuer_not_registered; the right one signs in", async () => {
  const port = (await import("./harness.ts")).freePort();
  const world = await setup({
    provider: {
      clients: [{
        client_id: "by-hand",
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ["authorization_code", "refresh_token"],
      }],
    },
    settings: {
      clientId: "by-hand",
      clientIssuer: "https://other.example.test",
      redirectPort: port,
    },
  });
  try {
    await failsWith(call(world), "issuer_not_registered");
    strictEqual(world.opened.length, 0);
    const right = world.again({
      clientId: "by-hand",
      clientIssuer: world.provider.issuer,
      redirectPort: port,
    });
    const response = await call({ source: right.source, resource: world.resource });
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.provider.hits.get("/reg") ?? 0, 0);
    await Promise.all(right.visits);
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

Deno.test("--no-browser: no browser starts; the log line has the start URL", async () => {
  const world = await setup({ settings: { noBrowser: true } });
  try {
    const pending = call(world);
    const { visit } = await import("../fixtures/auth/browser.ts");
    let url: string | undefined;
    const deadline = Date.now() + 10_000;
    while (url === undefined && Date.now() < deadline) {
      url = world.log.join("").match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0];
      if (url === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    ok(url, "the log names the start URL");
    const seen = await visit(url, "login");
    strictEqual((await pending).status, 200);
    ok(seen.text.includes("The sign-in is done"));
    strictEqual(world.opened.length, 0);
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
