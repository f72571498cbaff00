/** Input rounds (M2) over the real program: the v1 client as VS Code, and raw lines. */

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { assertIncludes } from "../assert.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { BridgeProcess, bridgeTransport, RAW_SERVER } from "./helpers.ts";

type Obj = Record<string, unknown>;
const FORM = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Your name?",
    requestedSchema: {
      type: "object",
      properties: { name: { type: "string", minLength: 2 } },
      required: ["name"],
    },
  },
};
const url = (u: string) => ({
  method: "elicitation/create",
  params: { mode: "url", message: "Sign in", url: u },
});
const ROOTS = { method: "roots/list", params: {} };
const SAMPLING = {
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 },
};
const ALL_CAPS = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

async function legacyClient(capabilities: Obj, events: unknown[]): Promise<Client> {
  const transport = bridgeTransport(RAW_SERVER("ok"));
  const client = new Client({ name: "vscode-like", version: "1" }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: Obj }) => {
    events.push(["elicit", request.params]);
    if (request.params.mode === "url") return { action: "accept" };
    const schema = request.params.requestedSchema as { properties: Obj };
    if ("continue" in schema.properties) {
      return { action: "accept", content: { continue: "Continue" } };
    }
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    events.push(["sampling"]);
    return { role: "assistant", content: { type: "text", text: "hello" }, model: "m" };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    events.push(["roots"]);
    return { roots: [{ uri: "file:///work", name: "w" }, { uri: "https://x/y" }] };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n: { params: Obj }) => {
    events.push(["complete", n.params]);
  });
  await client.connect(transport);
  return client;
}

Deno.test("v1 client answers form, sampling and roots of one round; the upstream gets inputResponses and requestState", async () => {
  const events: unknown[] = [];
  const client = await legacyClient(ALL_CAPS, events);
  try {
    const result = await client.callTool({
      name: "ask",
      arguments: { sequence: [{ f: FORM, s: SAMPLING, r: ROOTS }] },
    });
    deepStrictEqual(result.structuredContent, {
      inputResponses: {
        f: { action: "accept", content: { name: "Ada" } },
        s: { role: "assistant", content: { type: "text", text: "hello" }, model: "m" },
        r: { roots: [{ uri: "file:///work", name: "w" }] },
      },
      requestState: "opaque-state:1:x/y+z=",
    });
    deepStrictEqual(events.length, 3);
  } finally {
    await client.close();
  }
});

Deno.test("v1 client: a URL step, the Continue form when asked again, and the complete notification before the response", async () => {
  const events: unknown[] = [];
  const client = await legacyClient(ALL_CAPS, events);
  try {
    const u = "https://auth.example.com/step?x=1";
    const result = await client.callTool({
      name: "ask",
      arguments: { sequence: [{ a: url(u) }, { a: url(u) }, { b: url(u) }] },
    });
    deepStrictEqual(result.structuredContent, {
      inputResponses: { b: { action: "accept" } },
      requestState: "opaque-state:3:x/y+z=",
    });
    deepStrictEqual(events, [
      ["elicit", { mode: "url", message: "Sign in", url: u, elicitationId: "elicitation-1" }],
      ["elicit", {
        mode: "form",
        message: "Complete the step in the web browser. Then select Continue.",
        requestedSchema: {
          type: "object",
          properties: {
            continue: {
              type: "string",
              title: "Continue",
              enum: ["Continue"],
              default: "Continue",
            },
          },
          required: ["continue"],
        },
      }],
      ["elicit", {
        mode: "form",
        message: "Complete the step in the web browser. Then select Continue.",
        requestedSchema: {
          type: "object",
          properties: {
            continue: {
              type: "string",
              title: "Continue",
              enum: ["Continue"],
              default: "Continue",
            },
          },
          required: ["continue"],
        },
      }],
      ["complete", { elicitationId: "elicitation-1" }],
    ]);
  } finally {
    await client.close();
  }
});

const INIT_CAPS = ALL_CAPS;

async function startRaw(
  capabilities: Obj = INIT_CAPS,
  options: string[] = [],
): Promise<BridgeProcess> {
  const bridge = new BridgeProcess(options, RAW_SERVER("ok"));
  await bridge.initialize(capabilities);
  return bridge;
}

function errorData(msg: Obj | null): unknown {
  return (msg?.error as Obj | undefined)?.data;
}

Deno.test("checks before a question: undeclared kinds and bad input requests fail the request, no question", async (t) => {
  const cases: [string, Obj, Obj, unknown][] = [
    ["form not declared", {}, { k: FORM }, {
      cause: "undeclared_input_request",
      detail: "input request 'k': the client did not declare elicitation.form",
    }],
    ["url not declared", { elicitation: {} }, { k: url("https://x.example/") }, {
      cause: "undeclared_input_request",
      detail: "input request 'k': the client did not declare elicitation.url",
    }],
    ["sampling not declared", {}, { k: SAMPLING }, {
      cause: "undeclared_input_request",
      detail: "input request 'k': the client did not declare sampling",
    }],
    ["roots not declared", {}, { k: ROOTS }, {
      cause: "undeclared_input_request",
      detail: "input request 'k': the client did not declare roots",
    }],
    ["sampling with tools", ALL_CAPS, {
      k: { method: "sampling/createMessage", params: { ...SAMPLING.params, tools: [] } },
    }, {
      cause: "undeclared_input_request",
      detail:
        "input request 'k': sampling with tools needs sampling.tools, and the client did not declare it",
    }],
    ["tool result rules", { sampling: { tools: {} } }, {
      k: {
        method: "sampling/createMessage",
        params: {
          maxTokens: 5,
          messages: [{
            role: "user",
            content: [{ type: "tool_result", toolUseId: "t1", content: [] }],
          }],
        },
      },
    }, {
      cause: "invalid_input_request",
      detail: "input request 'k': the sampling messages do not obey the tool result rules",
    }],
    ["not the shape", ALL_CAPS, { k: { method: "elicitation/create", params: { mode: "form" } } }, {
      cause: "invalid_input_request",
      detail: "input request 'k': the input request does not have the shape of the schema",
    }],
    ["unknown method", ALL_CAPS, { k: { method: "ping", params: {} } }, {
      cause: "invalid_input_request",
      detail: "input request 'k': the input request does not have the shape of the schema",
    }],
    ["schema does not compile", ALL_CAPS, {
      k: {
        method: "elicitation/create",
        params: {
          message: "m",
          requestedSchema: { type: "object", properties: { a: { type: "nonsense" } } },
        },
      },
    }, {
      cause: "invalid_input_request",
      detail: "input request 'k': the requestedSchema does not compile",
    }],
  ];
  for (const [name, caps, requests, data] of cases) {
    await t.step(name, async () => {
      await using bridge = await startRaw(caps);
      await bridge.request(2, "tools/call", {
        name: "ask",
        arguments: { sequence: [{ ...requests, ok: ROOTS }] },
      });
      const msg = await bridge.next();
      strictEqual(msg?.id, 2, `no question first: ${JSON.stringify(msg)}`);
      deepStrictEqual(errorData(msg), data);
      strictEqual((msg?.error as Obj).code, -32603);
    });
  }
});

Deno.test("checks of the whole round: count, inputRequests, requestState", async (t) => {
  const many: Obj = {};
  for (let i = 0; i < 17; i++) many[`r${i}`] = ROOTS;
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
      raw: { resultType: "input_required", inputRequests: { r: ROOTS }, requestState: 5 },
    }, {
      cause: "invalid_input_request",
      detail: "the requestState member is not a string",
    }],
  ];
  for (const [name, step, data] of cases) {
    await t.step(name, async () => {
      await using bridge = await startRaw();
      await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [step] } });
      const msg = await bridge.next();
      strictEqual(msg?.id, 2);
      deepStrictEqual(errorData(msg), data);
    });
  }
});

/** Answers every question of the bridge with `answer(question)` until the response of `id`. */
async function answerUntil(
  bridge: BridgeProcess,
  id: unknown,
  answer: (q: Obj) => string | null,
): Promise<{ response: Obj; seen: Obj[] }> {
  const seen: Obj[] = [];
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error(`no response; stderr: ${bridge.stderr}`);
    if (msg.id === id && !("method" in msg)) return { response: msg, seen };
    seen.push(msg);
    if (typeof msg.method === "string" && typeof msg.id === "string") {
      const line = answer(msg);
      if (line !== null) await bridge.writeRaw(line + "\n");
    }
  }
}

const result = (id: unknown, value: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, result: value });

Deno.test("answers: error and invalid lines of an elicitation give cancel; refused URL gives decline; roots filtered", async () => {
  await using bridge = await startRaw();
  const refused = [
    "http://127.1/",
    "http://localhost.evil.com/",
    "http://user@localhost/",
    "javascript:alert(1)",
  ];
  const requests: Obj = { e1: FORM, e2: FORM, r: ROOTS };
  refused.forEach((u, i) => requests[`u${i}`] = url(u));
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [requests] } });
  let n = 0;
  const { response, seen } = await answerUntil(bridge, 2, (q) => {
    if (q.method === "roots/list") {
      return result(q.id, { roots: [{ uri: "file:///a" }, { uri: "vscode://b" }] });
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
      ["form", FORM, { action: "accept", content: { name: "A" } }],
      ["sampling", SAMPLING, { role: "robot" }],
      ["roots", ROOTS, { roots: "x" }],
      ["elicitation shape", FORM, { action: "maybe" }],
    ] as const
  ) {
    await t.step(name, async () => {
      await using bridge = await startRaw();
      await bridge.request(2, "tools/call", {
        name: "ask",
        arguments: { sequence: [{ k: request }] },
      });
      const { response } = await answerUntil(bridge, 2, (q) => result(q.id, answer));
      deepStrictEqual(errorData(response), { cause: "invalid_client_answer" });
    });
  }
});

Deno.test("answers: a client error for sampling or roots fails the request with the client's error", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ k: SAMPLING }] },
  });
  const { response } = await answerUntil(
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
  await bridge.request(3, "tools/call", { name: "ask", arguments: { sequence: [{ k: ROOTS }] } });
  const second = await answerUntil(bridge, 3, (q) => `{"id":"${q.id}",,,`);
  deepStrictEqual(errorData(second.response), { cause: "invalid_client_answer" });
});

Deno.test("a form without a property gets the Continue form with its message; accept gives empty content", async () => {
  await using bridge = await startRaw();
  const empty = {
    method: "elicitation/create",
    params: { message: "Confirm?", requestedSchema: { type: "object", properties: {} } },
  };
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [{ k: empty }] } });
  const { response, seen } = await answerUntil(
    bridge,
    2,
    (q) => result(q.id, { action: "accept", content: { continue: "Continue" } }),
  );
  deepStrictEqual((seen[0]!.params as Obj).message, "Confirm?");
  deepStrictEqual(((response.result as Obj).structuredContent as Obj).inputResponses, {
    k: { action: "accept", content: {} },
  });
});

Deno.test("ids: b-1, b-2, ...; unknown, numeric, null and late answers are dropped", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ a: ROOTS, b: ROOTS }] },
  });
  const q1 = await bridge.next();
  const q2 = await bridge.next();
  deepStrictEqual([q1?.id, q2?.id], ["b-1", "b-2"]);
  await bridge.writeRaw(
    result("b-99", { roots: [] }) + "\n" + result(5, {}) + "\n" + result(null, {}) + "\n",
  );
  await bridge.writeRaw(
    result("b-1", { roots: [] }) + "\n" + result("b-1", { roots: [{ uri: "file:///late" }] }) +
      "\n",
  );
  await bridge.writeRaw(result("b-2", { roots: [] }) + "\n");
  const msg = await bridge.next();
  strictEqual(msg?.id, 2);
  deepStrictEqual(((msg?.result as Obj).structuredContent as Obj).inputResponses, {
    a: { roots: [] },
    b: { roots: [] },
  });
});

Deno.test("a cancel in the middle of a round: questions get notifications/cancelled, the request gets nothing", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [{ a: ROOTS }] } });
  const q = await bridge.next();
  strictEqual(q?.id, "b-1");
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 2 },
  });
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "the client canceled the request" },
  });
  await bridge.writeRaw(result("b-1", { roots: [] }) + "\n"); // late: dropped
  await bridge.request(3, "ping");
  strictEqual((await bridge.next())?.id, 3);
});

Deno.test("the end of the input cancels open questions with the reason", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [{ a: ROOTS }] } });
  strictEqual((await bridge.next())?.id, "b-1");
  strictEqual(await bridge.exit(), 0);
  deepStrictEqual(await bridge.rest(1000), [{
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "the client closed the connection" },
  }]);
});

Deno.test("too_many_rounds after the tenth round still asks for input", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: Array(10).fill({ a: ROOTS }) },
  });
  const { response, seen } = await answerUntil(bridge, 2, (q) => result(q.id, { roots: [] }));
  strictEqual(seen.length, 9);
  deepStrictEqual(errorData(response), { cause: "too_many_rounds" });
});

Deno.test("the request-state rule: tools/call gets an isError result, prompts/get an error with the upstream code", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ a: ROOTS }, "stale"] },
  });
  const { response } = await answerUntil(bridge, 2, (q) => result(q.id, { roots: [] }));
  deepStrictEqual(response.result, {
    content: [{
      type: "text",
      text: "The upstream server did not accept the saved state of the request. " +
        "The answer possibly came after the time limit of the state, or the server started again. " +
        "Upstream message: the state expired. Run the tool again.",
    }],
    isError: true,
  });
  await bridge.request(3, "prompts/get", {
    name: "ask",
    arguments: { sequence: [{ a: ROOTS }, "stale"] },
  });
  const second = await answerUntil(bridge, 3, (q) => result(q.id, { roots: [] }));
  const error = second.response.error as Obj;
  strictEqual(error.code, -32602);
  match(String(error.message), /Upstream message: the state expired\. Send the request again\.$/);
  deepStrictEqual(error.data, { reason: "expired" });
  assertIncludes(bridge.stderr, "warn: the upstream server did not accept the saved state");
});

Deno.test("the upstream stops while the bridge waits for answers: questions canceled, the request gets upstream_exited", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ dieAfterMs: 200, requests: { a: ROOTS } }] },
  });
  strictEqual((await bridge.next())?.id, "b-1");
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "the upstream server stopped" },
  });
  deepStrictEqual(errorData(await bridge.next()), { cause: "upstream_exited" });
  strictEqual(await bridge.exit(), 1);
});
