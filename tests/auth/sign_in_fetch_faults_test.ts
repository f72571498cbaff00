/**
 * The sign-in's token request is never sent twice (issue 29): an
 * authorization code sent twice is refused, and RFC 6749 §4.1.2 lets the
 * server revoke the tokens it just issued. Through the fetch of the
 * sign-in (`signInFetch`: HTTP/2 for https) and a TCP proxy that injects
 * faults (`tests/fixtures/fault_proxy.ts`), in front of a TLS token
 * endpoint on node:http2 that counts each code it gets: one reset of the
 * connection while 8 token requests wait for their answer, and a storm of
 * faults then a calm phase.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { signInFetch, SignInHttp } from "../../lib/auth/sign_in_fetch.ts";
import { type FaultPlan, startFaultProxy } from "../fixtures/fault_proxy.ts";
import { serveHttp2 } from "../fixtures/http2_upstream.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";

const certificates = await makeCertificates();
const ca = await Deno.readTextFile(certificates.caFile);
const SEED = Number(Deno.env.get("FAULT_SEED") ?? Math.floor(Math.random() * 2 ** 31));
// deno-lint-ignore no-console
console.error(`fault injection seed: ${SEED} (FAULT_SEED=${SEED} replays it)`);

/** A token endpoint that counts each code, and answers after `ms` of the form. */
async function tokenServer() {
  const codes = new Map<string, number>();
  let received = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const upstream = await serveHttp2(async (request) => {
    if (request.method === "GET") return Response.json({ issuer: "https://127.0.0.1" });
    const form = new URLSearchParams(await request.text());
    const code = form.get("code") ?? "";
    codes.set(code, (codes.get(code) ?? 0) + 1);
    received++;
    for (const w of waiters.filter((w) => received >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    await new Promise((resolve) => setTimeout(resolve, Number(form.get("ms") ?? 0)));
    return Response.json({ access_token: `at-${code}`, token_type: "Bearer" });
  }, { cert: certificates.cert, key: certificates.key, allowHTTP1: true, path: "/token" });
  return {
    upstream,
    codes,
    received: (n: number) =>
      received >= n ? Promise.resolve() : new Promise<void>((resolve) => {
        waiters.push({ n, resolve });
      }),
    twice: () => [...codes].filter(([, n]) => n > 1).map(([code]) => code),
  };
}

/** One token request through a step of the sign-in; its status, or the step's failure. */
async function tokenRequest(http: SignInHttp, url: string, code: string, ms: number) {
  const step = http.step("token request");
  try {
    const response = await step.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, ms: String(ms) }),
    });
    await response.text();
    return String(response.status);
  } catch {
    return step.failure().signIn?.cause ?? "(none)";
  }
}

Deno.test("sign-in: 8 token requests on one HTTP/2 connection and one reset: each code is sent once", async () => {
  const server = await tokenServer();
  await using _upstream = server.upstream;
  await using proxy = await startFaultProxy(server.upstream.port, SEED);
  const url = `https://127.0.0.1:${proxy.port}/token`;
  const http = new SignInHttp({ fetch: signInFetch([ca]), signal: AbortSignal.timeout(20_000) });
  // The metadata first: the connection has carried a request (fetch's rule of a reused one).
  const metadata = http.step("authorization server metadata");
  await (await metadata.fetch(url.replace("/token", "/.well-known/oauth-authorization-server")))
    .text();
  const pending = Array.from(
    { length: 8 },
    (_, i) => tokenRequest(http, url, `code-${i}`, 1000),
  );
  await server.received(8);
  strictEqual(proxy.resetAll(), 1, "one connection carries every request");
  deepStrictEqual(await Promise.all(pending), Array(8).fill("sign_in_failed"));
  // Long enough for a resend to reach the server.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  deepStrictEqual(server.twice(), []);
  strictEqual(server.codes.size, 8);
});

Deno.test("sign-in: token requests under a storm of faults then a calm phase: no code is sent twice", async () => {
  const server = await tokenServer();
  await using _upstream = server.upstream;
  await using proxy = await startFaultProxy(server.upstream.port, SEED);
  const url = `https://127.0.0.1:${proxy.port}/token`;
  const http = new SignInHttp({
    fetch: signInFetch([ca]),
    signal: AbortSignal.timeout(50_000),
    requestTimeoutMs: 5_000,
  });
  const storm: FaultPlan = {
    resetBeforeByte: 0.2,
    everyMs: [100, 400],
    resetNow: 0.5,
    resetMidAnswer: 0.2,
    midAnswerBytes: [10, 200],
    stall: 0.3,
    stallMs: [500, 1500],
    latencyMs: [0, 10],
  };
  let next = 0;
  const phase = async (calls: number) => {
    const outcomes: string[] = [];
    let left = calls;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (left-- > 0) {
        outcomes.push(await tokenRequest(http, url, `code-${next++}`, 20 + (next % 7) * 30));
      }
    }));
    return outcomes;
  };
  proxy.setPlan(storm);
  const stormOutcomes = await phase(96);
  proxy.setPlan(null);
  const calmOutcomes = await phase(32);
  const where = `seed ${SEED}, faults ${JSON.stringify(proxy.counts)}, storm ${
    JSON.stringify(stormOutcomes)
  }`;
  deepStrictEqual(server.twice(), [], where);
  strictEqual(stormOutcomes.length, 96, where);
  ok(stormOutcomes.every((o) => o === "200" || o === "sign_in_failed"), where);
  ok(stormOutcomes.includes("sign_in_failed"), where);
  deepStrictEqual(calmOutcomes, Array(32).fill("200"), where);
});
