/** The requests of the sign-in: their limits, the endpoint rule and the CA of --ca-file. */

import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { signInFetch, SignInHttp } from "../../lib/auth/sign_in_fetch.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";

function causeOf(error: unknown): string | undefined {
  return error instanceof UpstreamFailure ? error.signIn?.cause : undefined;
}

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
