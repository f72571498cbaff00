/** The URL elicitation of a later sign-in. */

import { deepStrictEqual, fail, strictEqual } from "node:assert/strict";
import { PendingTable } from "../../lib/input/pending.ts";
import { signInPrompt } from "../../lib/input/sign_in_prompt.ts";
import type { JsonObject, Message } from "../../lib/jsonrpc/message.ts";

function env(answerTimeoutMs = 5000) {
  const written: JsonObject[] = [];
  const pending = new PendingTable("b-");
  let n = 0;
  return {
    written,
    pending,
    env: {
      pending,
      write: (m: Message) => void written.push(m as unknown as JsonObject),
      nextElicitationId: () => `elicitation-${++n}`,
      answerTimeoutMs,
    },
  };
}

Deno.test("sign-in prompt: a URL elicitation; accept, then the complete notification when the sign-in ends", async () => {
  const t = env();
  let signedIn!: () => void;
  const done = new Promise<void>((resolve) => signedIn = resolve);
  const prompt = signInPrompt(t.env, () => done);
  const answer = prompt("https://127.0.0.1:1/start/x", "Sign in.", new AbortController().signal);
  deepStrictEqual(t.written[0], {
    jsonrpc: "2.0",
    id: "b-1",
    method: "elicitation/create",
    params: {
      mode: "url",
      message: "Sign in.",
      url: "https://127.0.0.1:1/start/x",
      elicitationId: "elicitation-1",
    },
  });
  t.pending.settle("b-1", { kind: "result", result: { action: "accept" } });
  strictEqual(await answer, "accept");
  strictEqual(t.written.length, 1);
  signedIn();
  await done;
  await Promise.resolve();
  deepStrictEqual(t.written[1], {
    jsonrpc: "2.0",
    method: "notifications/elicitation/complete",
    params: { elicitationId: "elicitation-1" },
  });
});

Deno.test("sign-in prompt: an error or a line that is not valid rejects (no consent)", async () => {
  for (
    const reply of [{ kind: "error", error: { code: -32000, message: "no" } }, {
      kind: "invalid",
    }] as const
  ) {
    const t = env();
    const answer = signInPrompt(t.env, () => Promise.resolve())(
      "https://a.example/s",
      "m",
      new AbortController().signal,
    );
    t.pending.settle("b-1", reply);
    await answer.then(() => fail("expected a rejection"), () => {});
  }
});

Deno.test("sign-in prompt: decline is decline; a result without a valid action is cancel", async () => {
  const cases = [
    [{ kind: "result", result: { action: "decline" } }, "decline"],
    [{ kind: "result", result: { action: "cancel" } }, "cancel"],
    [{ kind: "result", result: { action: "maybe" } }, "cancel"],
  ] as const;
  for (const [reply, expected] of cases) {
    const t = env();
    const answer = signInPrompt(t.env, () => Promise.resolve())(
      "https://a.example/s",
      "m",
      new AbortController().signal,
    );
    t.pending.settle("b-1", reply);
    strictEqual(await answer, expected);
    strictEqual(t.written.length, 1, "no complete notification without an accept");
  }
});

Deno.test("sign-in prompt: no answer in time or an abort cancels the question for the client", async () => {
  const t = env(20);
  const answer = signInPrompt(t.env, () => Promise.resolve())(
    "https://a.example/s",
    "m",
    new AbortController().signal,
  );
  strictEqual(await answer, "cancel");
  deepStrictEqual(t.written[1], {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "no answer in time" },
  });
  strictEqual(t.pending.settle("b-1", { kind: "result", result: { action: "accept" } }), false);

  const u = env();
  const abort = new AbortController();
  const aborted = signInPrompt(u.env, () => Promise.resolve())(
    "https://a.example/s",
    "m",
    abort.signal,
  );
  abort.abort();
  strictEqual(await aborted, "cancel");
  strictEqual((u.written[1]!.params as JsonObject).reason, "no answer in time");
});
