/**
 * requestedSchemas of the upstream server over the real program: what
 * compiled once compiles again, and what cannot be checked safely never
 * reaches the client, crashes or stalls the bridge.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, RAW_SERVER } from "./helpers.ts";

type Obj = Record<string, unknown>;
const CAPS = { elicitation: { form: {} } };

const formOf = (requestedSchema: Obj) => ({
  method: "elicitation/create",
  params: { mode: "form", message: "Your name?", requestedSchema },
});
const NAME = { name: { type: "string", minLength: 2 } };
const WITH_ID = formOf({
  $id: "https://forms.example/name",
  type: "object",
  properties: NAME,
  required: ["name"],
});

async function start(): Promise<BridgeProcess> {
  const bridge = new BridgeProcess([], RAW_SERVER("ok"));
  await bridge.initialize(CAPS);
  return bridge;
}

const ask = (bridge: BridgeProcess, id: number, sequence: unknown[]) =>
  bridge.request(id, "tools/call", { name: "ask", arguments: { sequence } });

/** Answers each question with `content` until the response of `id`; gives the response and the questions. */
async function answerAll(
  bridge: BridgeProcess,
  id: number,
  content: Obj,
): Promise<{ response: Obj; questions: number }> {
  let questions = 0;
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error(`no response; stderr: ${bridge.stderr}`);
    if (msg.id === id && !("method" in msg)) return { response: msg, questions };
    if (msg.method === "elicitation/create") {
      questions++;
      await bridge.send({ jsonrpc: "2.0", id: msg.id, result: { action: "accept", content } });
    }
  }
}

const inputResponses = (response: Obj) =>
  ((response.result as Obj).structuredContent as Obj).inputResponses;

Deno.test("the same $id compiles in each round and in the next call of the tool", async () => {
  await using bridge = await start();
  await ask(bridge, 2, [{ k: WITH_ID }, { k: WITH_ID }]);
  const first = await answerAll(bridge, 2, { name: "Ada" });
  strictEqual(first.questions, 2, JSON.stringify(first.response));
  deepStrictEqual(inputResponses(first.response), {
    k: { action: "accept", content: { name: "Ada" } },
  });
  await ask(bridge, 3, [{ k: WITH_ID }]);
  const second = await answerAll(bridge, 3, { name: "Bob" });
  strictEqual(second.questions, 1, JSON.stringify(second.response));
  deepStrictEqual(inputResponses(second.response), {
    k: { action: "accept", content: { name: "Bob" } },
  });
});

Deno.test("a schema that cannot be checked safely fails the request before a question", async (t) => {
  // 24 anyOf of two references to the next: 2^24 paths (4 GB, then a crash).
  const defs: Obj = { a24: { type: "string" } };
  for (let i = 0; i < 24; i++) {
    defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  }
  const cases: [string, Obj][] = [
    ["$async", { $async: true, type: "object", properties: NAME, required: ["name"] }],
    ["a $ref loop", { type: "object", properties: NAME, allOf: [{ $ref: "#" }] }],
    ["a $ref loop under a property", {
      type: "object",
      properties: { name: { allOf: [{ $ref: "#/properties/name" }] } },
    }],
    ["2^24 paths", { type: "object", properties: { name: { $ref: "#/$defs/a0" } }, $defs: defs }],
  ];
  for (const [name, schema] of cases) {
    await t.step(name, async () => {
      await using bridge = await start();
      await ask(bridge, 2, [{ k: formOf(schema) }]);
      const msg = await bridge.next();
      strictEqual(msg?.id, 2, `no question first: ${JSON.stringify(msg)}`);
      deepStrictEqual((msg?.error as Obj).data, {
        cause: "invalid_input_request",
        detail: "input request 'k': the requestedSchema does not compile",
      });
      // An answer that breaks the schema used to crash the process ($async) or to get
      // no response (the loop): the bridge goes on.
      await bridge.request(3, "ping");
      deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 3, result: {} });
    });
  }
});

Deno.test("an answer whose check would take too long gives invalid_client_answer at once", async () => {
  await using bridge = await start();
  // Two ways into each level of the answer: 2^depth paths for ajv.
  const twice = {
    type: "object",
    properties: { name: { type: "string" } },
    anyOf: [{ properties: { x: { $ref: "#" } } }, { properties: { x: { $ref: "#" } } }],
  };
  await ask(bridge, 2, [{ k: formOf(twice) }]);
  const question = await bridge.next();
  strictEqual(question?.method, "elicitation/create");
  let content: Obj = { name: "Ada" };
  for (let i = 0; i < 40; i++) content = { x: content };
  await bridge.send({ jsonrpc: "2.0", id: question?.id, result: { action: "accept", content } });
  await bridge.request(3, "ping");
  const answers = [await bridge.next(2000), await bridge.next(2000)];
  deepStrictEqual(answers.map((m) => m?.id).sort(), [2, 3]);
  const response = answers.find((m) => m?.id === 2)!;
  deepStrictEqual((response.error as Obj).data, { cause: "invalid_client_answer" });
});

Deno.test("a pattern with catastrophic backtracking does not stall the bridge", async () => {
  await using bridge = await start();
  const schema = {
    type: "object",
    properties: { name: { type: "string", pattern: "^(a+)+$" } },
    required: ["name"],
  };
  await ask(bridge, 2, [{ k: formOf(schema) }]);
  const question = await bridge.next();
  strictEqual(question?.method, "elicitation/create");
  // With a backtracking engine 28 characters took 7 s; 48 would take years.
  await bridge.send({
    jsonrpc: "2.0",
    id: question?.id,
    result: { action: "accept", content: { name: "a".repeat(47) + "!" } },
  });
  await bridge.request(3, "ping");
  const answers = [await bridge.next(2000), await bridge.next(2000)];
  deepStrictEqual(answers.map((m) => m?.id).sort(), [2, 3]);
  const response = answers.find((m) => m?.id === 2)!;
  deepStrictEqual((response.error as Obj).data, { cause: "invalid_client_answer" });
  await ask(bridge, 4, [{ k: formOf(schema) }]);
  const ok = await answerAll(bridge, 4, { name: "a".repeat(47) });
  deepStrictEqual(inputResponses(ok.response), {
    k: { action: "accept", content: { name: "a".repeat(47) } },
  });
});
