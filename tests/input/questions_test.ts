import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertIncludes } from "../assert.ts";
import * as raw from "./raw_rounds.ts";
import { declaredOf, loadFormChecks } from "../../lib/input/input_checks.ts";
import type { Answer } from "../../lib/input/pending.ts";
import {
  CONTINUE_MESSAGE,
  continueForm,
  type Plan,
  type PlanContext,
  planQuestions,
  type Question,
  responsesOf,
  toResponse,
  type UrlStep,
} from "../../lib/input/questions.ts";
import type { Json, JsonObject } from "../../lib/jsonrpc/message.ts";

// The rounds load the compiler of requestedSchema before their first question.
await loadFormChecks();

const ALL = declaredOf({ elicitation: { form: {}, url: {} }, sampling: {}, roots: {} });
const FORM = {
  method: "elicitation/create",
  params: {
    message: "Name?",
    requestedSchema: { type: "object", properties: { name: { type: "string", minLength: 2 } } },
  },
};
const url = (u: string) => ({
  method: "elicitation/create",
  params: { mode: "url", message: "Sign in", url: u },
});

function context(overrides: Partial<PlanContext> = {}): PlanContext & { refused: string[] } {
  const refused: string[] = [];
  let n = 0;
  return {
    declared: ALL,
    accepted: new Map(),
    nextElicitationId: () => `elicitation-${++n}`,
    onRefusedUrl: (key) => refused.push(key),
    refused,
    ...overrides,
  };
}

function plan(requests: JsonObject, ctx: PlanContext = context()): Plan {
  const planned = planQuestions(requests, ctx);
  ok(planned.ok, JSON.stringify(!planned.ok && planned.error.toJSON()));
  return planned.value;
}

Deno.test("questions: the params of each input request without task; a URL gets an elicitationId", () => {
  const { questions, responses } = plan({
    r: { method: "roots/list", params: { task: { ttl: 1 } } },
    u: url("https://x.example/a"),
  });
  deepStrictEqual(responses, {});
  deepStrictEqual(questions.map((q) => [q.method, q.params]), [
    ["roots/list", {}],
    ["elicitation/create", {
      mode: "url",
      message: "Sign in",
      url: "https://x.example/a",
      elicitationId: "elicitation-1",
    }],
  ]);
});

Deno.test("questions: a refused URL gets a decline and a warning, no question", () => {
  const ctx = context();
  const { questions, responses } = plan({ a: url("http://evil.example/"), b: FORM }, ctx);
  deepStrictEqual(responses, { a: { action: "decline" } });
  deepStrictEqual(questions.map((q) => q.question.key), ["b"]);
  deepStrictEqual(ctx.refused, ["a"]);
});

Deno.test("questions: an accepted URL gets the Continue form; without elicitation.form the URL again", () => {
  const accepted = new Map<string, UrlStep>([["https://x.example/a", { elicitationId: "e-7" }]]);
  const withForm = plan({ a: url("https://x.example/a") }, context({ accepted }));
  deepStrictEqual(withForm.questions[0]!.params, continueForm(CONTINUE_MESSAGE));
  deepStrictEqual(withForm.questions[0]!.question, {
    key: "a",
    kind: "continue_url",
    url: "https://x.example/a",
    elicitationId: "e-7",
  });
  const declared = declaredOf({ elicitation: { url: {} } });
  const urlOnly = plan({ a: url("https://x.example/a") }, context({ accepted, declared }));
  deepStrictEqual(urlOnly.questions[0]!.params.elicitationId, "e-7");
});

Deno.test("questions: a form without a property gets the choice form with its message", () => {
  const empty = {
    method: "elicitation/create",
    params: { message: "Confirm?", requestedSchema: { type: "object" } },
  };
  const { questions } = plan({ k: empty });
  deepStrictEqual(questions[0]!.params, continueForm("Confirm?"));
  strictEqual(questions[0]!.question.kind, "continue_form");
});

Deno.test("questions: one failed check fails the round with the key in the detail", () => {
  const ctx = context();
  const planned = planQuestions({ a: url("http://evil.example/"), b: { method: "ping" } }, ctx);
  strictEqual(planned.ok, false);
  deepStrictEqual(!planned.ok && planned.error.data, {
    cause: "invalid_input_request",
    detail: "input request 'b': the input request does not have the shape of the schema",
  });
});

const result = (value: Json): Answer => ({ kind: "result", result: value });
const ERROR: Answer = {
  kind: "error",
  error: { code: -32000, message: "refused", data: { a: 1 } },
};
const INVALID_LINE: Answer = { kind: "invalid" };
const form = plan({ f: FORM }).questions[0]!.question;
const q = (kind: Question["kind"]): Question =>
  kind === "url" || kind === "continue_url"
    ? { key: "k", kind, url: "https://x/", elicitationId: "e-1" }
    : kind === "form"
    ? form
    : { key: "k", kind };

/** The value for the upstream server, or the error's code and data. */
function value(question: Question, answer: Answer): Json {
  const response = toResponse(question, answer);
  if (!response.ok) return { error: [response.error.code, response.error.data ?? null] };
  return response.value.value;
}
const BAD = { error: [-32603, { cause: "invalid_client_answer" }] };

const TABLE: [string, Question, Answer, Json][] = [
  ["form accept", q("form"), result({ action: "accept", content: { name: "Ada" } }), {
    action: "accept",
    content: { name: "Ada" },
  }],
  [
    "form content breaks the schema",
    q("form"),
    result({ action: "accept", content: { name: "A" } }),
    BAD,
  ],
  ["form decline drops content", q("form"), result({ action: "decline", content: { x: 1 } }), {
    action: "decline",
  }],
  ["form error", q("form"), ERROR, { action: "cancel" }],
  ["form invalid line", q("form"), INVALID_LINE, { action: "cancel" }],
  ["form without the shape", q("form"), result({ action: "maybe" }), BAD],
  ["url accept has no content", q("url"), result({ action: "accept", content: { a: 1 } }), {
    action: "accept",
  }],
  ["continue url accept", q("continue_url"), result({ action: "accept" }), { action: "accept" }],
  ["continue url error", q("continue_url"), ERROR, { action: "cancel" }],
  ["continue form accept", q("continue_form"), result({ action: "accept" }), {
    action: "accept",
    content: {},
  }],
  ["continue form cancel", q("continue_form"), result({ action: "cancel" }), { action: "cancel" }],
  ["sampling result", q("sampling"), result({ role: "assistant", model: "m", content: [] }), {
    role: "assistant",
    model: "m",
    content: [],
  }],
  ["sampling without the shape", q("sampling"), result({ role: "robot" }), BAD],
  ["sampling error", q("sampling"), ERROR, { error: [-32000, { a: 1 }] }],
  ["sampling invalid line", q("sampling"), INVALID_LINE, BAD],
  [
    "roots: file:// only",
    q("roots"),
    result({ roots: [{ uri: "file:///a" }, { uri: "https://b" }] }),
    {
      roots: [{ uri: "file:///a" }],
    },
  ],
  ["roots without the shape", q("roots"), result({ roots: [{ name: "x" }] }), BAD],
  ["roots error", q("roots"), ERROR, { error: [-32000, { a: 1 }] }],
  ["roots invalid line", q("roots"), INVALID_LINE, BAD],
];
for (const [name, question, answer, expected] of TABLE) {
  Deno.test(`answer table: ${name}`, () => deepStrictEqual(value(question, answer), expected));
}

Deno.test("responses: in order after the declines; an accepted URL is kept; a bad answer fails all", () => {
  const round = plan({
    d: url("http://evil.example/"),
    u: url("https://x/1"),
    r: { method: "roots/list" },
  });
  const accepted = new Map<string, UrlStep>();
  const responses = responsesOf(
    round,
    [result({ action: "accept" }), result({ roots: [] })],
    accepted,
  );
  ok(responses.ok);
  deepStrictEqual(
    JSON.stringify(responses.value),
    JSON.stringify({
      d: { action: "decline" },
      u: { action: "accept" },
      r: { roots: [] },
    }),
  );
  deepStrictEqual([...accepted], [["https://x/1", { elicitationId: "elicitation-1" }]]);
  const failed = responsesOf(round, [result({ action: "accept" }), INVALID_LINE], new Map());
  deepStrictEqual(!failed.ok && failed.error.data, { cause: "invalid_client_answer" });
});

// Through the whole bridge, in this process (tests/input/raw_rounds.ts): the client as raw
// lines or the v1 SDK client, the raw server's tool "ask" as the upstream.

type Obj = raw.Obj;

Deno.test("answers: error and invalid lines of an elicitation give cancel; refused URL gives decline; roots filtered", async () => {
  await using bridge = await raw.startRaw();
  const refused = [
    "http://127.1/",
    "http://localhost.evil.com/",
    "http://user@localhost/",
    "javascript:alert(1)",
  ];
  const requests: Obj = { e1: raw.FORM, e2: raw.FORM, r: raw.ROOTS };
  refused.forEach((u, i) => requests[`u${i}`] = raw.url(u));
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [requests] } });
  let n = 0;
  const { response, seen } = await raw.answerUntil(bridge, 2, (q) => {
    if (q.method === "roots/list") {
      return raw.result(q.id, { roots: [{ uri: "file:///a" }, { uri: "vscode://b" }] });
    }
    return n++ === 0
      ? JSON.stringify({ jsonrpc: "2.0", id: q.id, error: { code: -1, message: "no" } })
      : `{"jsonrpc":"2.0","id":"${q.id}",broken`;
  });
  strictEqual(seen.filter((m) => m.method === "elicitation/create").length, 2);
  const echo = ((response.result as Obj).structuredContent as Obj).inputResponses as Obj;
  deepStrictEqual(echo, {
    e1: { action: "cancel" },
    e2: { action: "cancel" },
    r: { roots: [{ uri: "file:///a" }] },
    u0: { action: "decline" },
    u1: { action: "decline" },
    u2: { action: "decline" },
    u3: { action: "decline" },
  });
  assertIncludes(bridge.stderr, "warn: refused the URL");
});

Deno.test("answers: a form answer that breaks the requestedSchema, and a bad sampling answer, give invalid_client_answer", async (t) => {
  for (
    const [name, request, answer] of [
      ["form", raw.FORM, { action: "accept", content: { name: "A" } }],
      ["sampling", raw.SAMPLING, { role: "robot" }],
      ["roots", raw.ROOTS, { roots: "x" }],
      ["elicitation shape", raw.FORM, { action: "maybe" }],
    ] as const
  ) {
    await t.step(name, async () => {
      await using bridge = await raw.startRaw();
      await bridge.request(2, "tools/call", {
        name: "ask",
        arguments: { sequence: [{ k: request }] },
      });
      const { response } = await raw.answerUntil(bridge, 2, (q) => raw.result(q.id, answer));
      deepStrictEqual(raw.errorData(response), { cause: "invalid_client_answer" });
    });
  }
});

Deno.test("answers: a client error for sampling or roots fails the request with the client's error", async () => {
  await using bridge = await raw.startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ k: raw.SAMPLING }] },
  });
  const { response } = await raw.answerUntil(
    bridge,
    2,
    (q) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: q.id,
        error: { code: -32000, message: "refused", data: { why: 1 } },
      }),
  );
  deepStrictEqual(response.error, { code: -32000, message: "refused", data: { why: 1 } });
  await bridge.request(3, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ k: raw.ROOTS }] },
  });
  const second = await raw.answerUntil(bridge, 3, (q) => `{"id":"${q.id}",,,`);
  deepStrictEqual(raw.errorData(second.response), { cause: "invalid_client_answer" });
});

Deno.test("a form without a property gets the Continue form with its message; accept gives empty content", async () => {
  await using bridge = await raw.startRaw();
  const empty = {
    method: "elicitation/create",
    params: { message: "Confirm?", requestedSchema: { type: "object", properties: {} } },
  };
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [{ k: empty }] } });
  const { response, seen } = await raw.answerUntil(
    bridge,
    2,
    (q) => raw.result(q.id, { action: "accept", content: { continue: "Continue" } }),
  );
  deepStrictEqual((seen[0]!.params as Obj).message, "Confirm?");
  deepStrictEqual(((response.result as Obj).structuredContent as Obj).inputResponses, {
    k: { action: "accept", content: {} },
  });
});
