/**
 * The seam of the token source: the HTTP link (in the same process, against
 * a real HTTP server on 127.0.0.1) with a token source of the test: the
 * Authorization header, a challenge and its retry, a refusal, a sign-in that
 * fails. Then `sendWithChallenges` on its own: the bound of challenges, a
 * sign-in that throws, the body of a challenged response.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import {
  type Challenge,
  type ChallengeOutcome,
  sendWithChallenges,
  type TokenSource,
} from "../../lib/http/token_source.ts";
import { json, serveMcp } from "../fixtures/http_raw.ts";
import { waitFor } from "../wait.ts";
import { call, openLink } from "../upstream/http_link_helpers.ts";

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
    via: 1,
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

/** A source that gives `token` and answers each challenge with `answer`. */
function sourceOf(
  answer: (challenge: Challenge, attempt: number) => Promise<ChallengeOutcome>,
  token = "Bearer t",
): TokenSource {
  return {
    authorization: () => Promise.resolve(token),
    challenge: answer,
    setUrlPrompt: () => {},
    nextSignIn: () => Promise.resolve(),
  };
}

Deno.test("sendWithChallenges: only 401 and 403 are challenges; any other status is the answer", async () => {
  for (const status of [200, 202, 400, 404, 407, 500]) {
    let challenges = 0;
    const source = sourceOf(() => {
      challenges++;
      return Promise.resolve("retry");
    });
    const sent: (string | undefined)[] = [];
    const response = await sendWithChallenges(source, new AbortController().signal, (token) => {
      sent.push(token);
      return Promise.resolve(new Response(null, { status }));
    });
    strictEqual(response.status, status);
    deepStrictEqual(sent, ["Bearer t"], `status ${status}`);
    strictEqual(challenges, 0, `status ${status}`);
  }
});

Deno.test("sendWithChallenges: a sign-in that throws another error is sign_in_failed with the status, without its message", async () => {
  const source = sourceOf(() => Promise.reject(new Error("sekrit-token in a message")));
  await rejects(
    sendWithChallenges(
      source,
      new AbortController().signal,
      () => Promise.resolve(new Response("no", { status: 401 })),
    ),
    (error) => {
      ok(error instanceof UpstreamFailure);
      strictEqual(error.kind, "sign_in");
      strictEqual(error.status, 401);
      deepStrictEqual(error.signIn, { cause: "sign_in_failed" });
      ok(!JSON.stringify({ ...error, message: error.message }).includes("sekrit"));
      return true;
    },
  );
});

Deno.test("sendWithChallenges: the body of each challenged response is canceled; the challenge gets the status and WWW-Authenticate", async () => {
  const canceled: number[] = [];
  const seen: [Challenge, number][] = [];
  const source = sourceOf((challenge, attempt) => {
    seen.push([challenge, attempt]);
    return Promise.resolve("retry");
  });
  let sends = 0;
  const response = await sendWithChallenges(source, new AbortController().signal, () => {
    const n = ++sends;
    if (n === 3) return Promise.resolve(new Response("ok"));
    const body = new ReadableStream({ cancel: () => void canceled.push(n) });
    return Promise.resolve(
      new Response(body, {
        status: n === 1 ? 401 : 403,
        headers: n === 1 ? { "www-authenticate": "Bearer scope=a" } : {},
      }),
    );
  });
  strictEqual(await response.text(), "ok");
  deepStrictEqual(canceled, [1, 2]);
  deepStrictEqual(seen, [
    [{ status: 401, wwwAuthenticate: "Bearer scope=a" }, 1],
    [{ status: 403, wwwAuthenticate: undefined }, 2],
  ]);
});
