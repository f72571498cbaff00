import { deepStrictEqual, strictEqual } from "node:assert/strict";
import * as raw from "./raw_rounds.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { checkRound } from "../../lib/input/round_checks.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";

const ROOTS = { method: "roots/list" };
const url = (u: string) => ({ method: "elicitation/create", params: { mode: "url", url: u } });
const input = (members: JsonObject): JsonObject => ({ resultType: "input_required", ...members });

/** The outcome as JSON: the code and data of the error, or what the round asks for. */
function outcome(result: JsonObject, round = 1) {
  const checked = checkRound(result, round, DEFAULT_LIMITS);
  if (!checked.ok) return { code: checked.error.code, data: checked.error.data };
  const { requests, requestState, urls } = checked.value;
  return { requests, requestState: requestState ?? null, urls: [...urls] };
}

const many: JsonObject = {};
for (let i = 0; i < 17; i++) many[`r${i}`] = ROOTS;
const sixteen = Object.fromEntries(Object.entries(many).slice(0, 16));

const error = (cause: string, detail?: string) => ({
  code: -32603,
  data: detail === undefined ? { cause } : { cause, detail },
});

const CASES: [string, JsonObject, number, unknown][] = [
  ["no inputRequests: an empty round", input({}), 1, {
    requests: {},
    requestState: null,
    urls: [],
  }],
  [
    "state and URLs",
    input({ inputRequests: { a: url("https://x/1"), b: ROOTS }, requestState: "s" }),
    1,
    {
      requests: { a: url("https://x/1"), b: ROOTS },
      requestState: "s",
      urls: ["https://x/1"],
    },
  ],
  ["16 input requests", input({ inputRequests: sixteen }), 9, {
    requests: sixteen,
    requestState: null,
    urls: [],
  }],
  ["the tenth round", input({ inputRequests: { a: ROOTS } }), 10, error("too_many_rounds")],
  [
    "the round limit before the members",
    input({ inputRequests: [1] }),
    10,
    error("too_many_rounds"),
  ],
  [
    "inputRequests not an object",
    input({ inputRequests: [1] }),
    1,
    error("invalid_input_request", "the inputRequests member is not an object"),
  ],
  // As before the split: a null inputRequests is read as no input requests.
  ["inputRequests null", input({ inputRequests: null }), 1, {
    requests: {},
    requestState: null,
    urls: [],
  }],
  [
    "requestState not a string",
    input({ inputRequests: { a: ROOTS }, requestState: 5 }),
    1,
    error("invalid_input_request", "the requestState member is not a string"),
  ],
  [
    "17 input requests",
    input({ inputRequests: many }),
    1,
    error("too_many_input_requests", "17 input requests in one round, limit: 16"),
  ],
];

for (const [name, result, round, expected] of CASES) {
  Deno.test(`round checks: ${name}`, () => deepStrictEqual(outcome(result, round), expected));
}

// Through the whole bridge, in this process (tests/input/raw_rounds.ts): the client as raw
// lines or the v1 SDK client, the raw server's tool "ask" as the upstream.

type Obj = raw.Obj;

Deno.test("checks of the whole round: count, inputRequests, requestState", async (t) => {
  const many: Obj = {};
  for (let i = 0; i < 17; i++) many[`r${i}`] = raw.ROOTS;
  const cases: [string, unknown, unknown][] = [
    ["17 input requests", many, {
      cause: "too_many_input_requests",
      detail: "17 input requests in one round, limit: 16",
    }],
    ["inputRequests not an object", {
      raw: { resultType: "input_required", inputRequests: [1], requestState: "s" },
    }, {
      cause: "invalid_input_request",
      detail: "the inputRequests member is not an object",
    }],
    ["requestState not a string", {
      raw: { resultType: "input_required", inputRequests: { r: raw.ROOTS }, requestState: 5 },
    }, {
      cause: "invalid_input_request",
      detail: "the requestState member is not a string",
    }],
  ];
  for (const [name, step, data] of cases) {
    await t.step(name, async () => {
      await using bridge = await raw.startRaw();
      await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [step] } });
      const msg = await bridge.next();
      strictEqual(msg?.id, 2);
      deepStrictEqual(raw.errorData(msg), data);
    });
  }
});

Deno.test("too_many_rounds after the tenth round still asks for input", async () => {
  await using bridge = await raw.startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: Array(10).fill({ a: raw.ROOTS }) },
  });
  const { response, seen } = await raw.answerUntil(
    bridge,
    2,
    (q) => raw.result(q.id, { roots: [] }),
  );
  strictEqual(seen.length, 9);
  deepStrictEqual(raw.errorData(response), { cause: "too_many_rounds" });
});
