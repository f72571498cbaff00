/**
 * The checks of the client's answers that could stall the bridge (a regular
 * expression with catastrophic backtracking, a schema whose check would take
 * too long), over the real program: a stall of the bridge cannot stop the
 * test's own timer here, so a bridge that stalls fails the test in 2 s
 * instead of hanging the run. The other input rounds run in process
 * (tests/input/).
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, RAW_SERVER } from "./helpers.ts";
import {
  answerAll,
  ask,
  FORM_CAPS,
  formOf,
  inputResponses,
  type Obj,
} from "../input/raw_rounds.ts";

async function start(): Promise<BridgeProcess> {
  const bridge = new BridgeProcess(["--", ...RAW_SERVER("ok")]);
  await bridge.initialize(FORM_CAPS);
  return bridge;
}

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
