/**
 * The HTTP link in the same process against a real HTTP server on
 * 127.0.0.1, with a token source of the test: the Authorization header, a
 * challenge and its retry, a refusal, a sign-in that fails, the close.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHttpLink } from "../../lib/upstream/http.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { fetchTransport } from "../../lib/upstream/post_transport.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import type { Challenge, ChallengeOutcome, TokenSource } from "../../lib/upstream/token_source.ts";
import { json, serveMcp } from "../fixtures/http_raw.ts";
import { waitFor } from "../wait.ts";
import { call, openLink } from "./http_link_helpers.ts";

/** A token source whose answers the test gives; it counts what the link asked. */
class TestTokenSource implements TokenSource {
  token: string | undefined = undefined;
  challenges: [Challenge, number][] = [];
  answer: (attempt: number) => Promise<ChallengeOutcome> = () => Promise.resolve("retry");
  signIns = 0;
  prompt: unknown;

  authorization(): Promise<string | undefined> {
    return Promise.resolve(this.token);
  }
  challenge(challenge: Challenge, attempt: number): Promise<ChallengeOutcome> {
    this.challenges.push([challenge, attempt]);
    return this.answer(attempt);
  }
  setUrlPrompt(prompt: unknown): void {
    this.prompt = prompt;
  }
  nextSignIn(): Promise<void> {
    this.signIns++;
    return Promise.resolve();
  }
}

Deno.test("http link: a 401 with a token source: the challenge, then one retry with the new token", async () => {
  const source = new TestTokenSource();
  await using upstream = serveMcp((m, request) => {
    if (request.headers.get("authorization") !== "Bearer new") {
      return new Response("no", {
        status: 401,
        headers: { "www-authenticate": 'Bearer resource_metadata="https://as.example/x"' },
      });
    }
    return json({ jsonrpc: "2.0", id: m.id, result: { ok: true } });
  });
  source.answer = () => {
    source.token = "Bearer new";
    return Promise.resolve("retry");
  };
  const { link, frames } = await openLink(upstream.url, { tokenSource: source });
  await call(link, 1);
  await waitFor("the result", () => frames.length === 1);
  deepStrictEqual(frames[0], {
    kind: "message",
    value: { jsonrpc: "2.0", id: 1, result: { ok: true } },
  });
  deepStrictEqual(source.challenges, [[{
    status: 401,
    wwwAuthenticate: 'Bearer resource_metadata="https://as.example/x"',
  }, 1]]);
  strictEqual(upstream.seen.length, 2);
  strictEqual(upstream.seen[0]!.headers.get("authorization"), null);
  await link.close();
});

Deno.test("http link: a refused challenge is access_refused with the status; a failed sign-in keeps its cause", async () => {
  const source = new TestTokenSource();
  await using upstream = serveMcp(() => new Response("no", { status: 403 }));
  const { link, frames } = await openLink(upstream.url, { tokenSource: source });
  source.answer = () => Promise.resolve("refused");
  await call(link, 1);
  await waitFor("the failure", () => frames.length === 1);
  const failed = frames[0] as { kind: "failed"; failure: UpstreamFailure };
  strictEqual(failed.kind, "failed");
  strictEqual(failed.failure.kind, "sign_in");
  strictEqual(failed.failure.status, 403);
  deepStrictEqual(failed.failure.signIn, { cause: "access_refused", detail: "HTTP status 403" });

  source.answer = () =>
    Promise.reject(new UpstreamFailure("sign_in", { signIn: { cause: "sandbox" } }));
  await call(link, 2);
  await waitFor("the failure", () => frames.length === 2);
  const sandbox = frames[1] as { kind: "failed"; failure: UpstreamFailure };
  deepStrictEqual(sandbox.failure.signIn, { cause: "sandbox" });

  // A source that says "retry" forever is stopped after three challenges.
  source.challenges = [];
  source.answer = () => Promise.resolve("retry");
  await call(link, 3);
  await waitFor("the failure", () => frames.length === 3);
  deepStrictEqual(source.challenges.map(([, attempt]) => attempt), [1, 2]);
  strictEqual((frames[2] as { failure: UpstreamFailure }).failure.signIn?.cause, "access_refused");
  await link.close();
});

Deno.test("http link: the token of the source goes on each POST; nextSignIn and the URL prompt reach it", async () => {
  const source = new TestTokenSource();
  source.token = "Bearer t0k3n";
  await using upstream = serveMcp((m) => json({ jsonrpc: "2.0", id: m.id, result: {} }));
  const { link, frames } = await openLink(upstream.url, { tokenSource: source });
  await call(link, 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } });
  await waitFor("two requests", () => upstream.seen.length === 2 && frames.length === 1);
  ok(upstream.seen.every((r) => r.headers.get("authorization") === "Bearer t0k3n"));
  await link.nextSignIn?.();
  strictEqual(source.signIns, 1);
  const prompt = () => Promise.resolve("accept" as const);
  link.setUrlPrompt?.(prompt);
  strictEqual(source.prompt, prompt);
  await link.close();
});

Deno.test("http link: without a token source there is no nextSignIn; a closed link refuses to send", async () => {
  let release!: () => void;
  const held = new Promise<Response>((resolve) => release = () => resolve(json({})));
  await using upstream = serveMcp(() => held);
  const { link, frames } = await openLink(upstream.url);
  strictEqual(link.nextSignIn, undefined);
  strictEqual(link.isRemote, true);
  await call(link, 1);
  await waitFor("the request", () => upstream.seen.length === 1);
  await link.close();
  deepStrictEqual(await link.ended, { kind: "closed" });
  let refused = false;
  await call(link, 2).catch((error) => refused = error instanceof UpstreamFailure);
  strictEqual(refused, true);
  // The aborted request gives no frame, also when its answer comes later.
  release();
  await new Promise((resolve) => setTimeout(resolve, 50));
  strictEqual(frames.length, 0);
});

Deno.test("http link: no compression is asked for, and so fetch never decodes a gzip body past the limit (its Content-Length is the compressed one)", async () => {
  const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { text: "a".repeat(300_000) } });
  const gzip = new Uint8Array(
    await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
  await using upstream = serveMcp(() =>
    new Response(gzip, {
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    })
  );
  for (const transport of [fetchTransport()]) {
    const link = await createHttpLink({
      url: new URL(upstream.url),
      maxResponseBytes: 100_000,
      transport,
    });
    const frames: UpstreamFrame[] = [];
    link.read((frame) => {
      frames.push(frame);
    });
    await call(link, 1);
    await waitFor("the failure", () => frames.length === 1);
    const failed = frames[0] as { kind: string; failure?: UpstreamFailure };
    strictEqual(failed.kind, "failed");
    strictEqual(failed.failure?.kind, "invalid_response");
    await link.close();
  }
  ok(upstream.seen.length === 1);
  ok(upstream.seen.every((r) => r.headers.get("accept-encoding") === "identity"));
});
