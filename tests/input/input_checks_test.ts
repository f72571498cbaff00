import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  ALL_CAPS,
  errorData,
  FORM,
  type Obj,
  ROOTS,
  SAMPLING,
  startRaw,
  url,
} from "./raw_rounds.ts";
import { declaredOf, obeysToolResultRules } from "../../lib/input/input_checks.ts";
import { compileSchema } from "../../lib/input/form_schema.ts";
import type { Json } from "../../lib/jsonrpc/message.ts";

const use = (id: string) => ({ type: "tool_use", id, name: "t", input: {} });
const res = (id: string) => ({ type: "tool_result", toolUseId: id, content: [] });
const text = { type: "text", text: "x" };

const cases: [string, Json[], boolean][] = [
  ["plain text", [{ role: "user", content: text }], true],
  ["use then result", [
    { role: "user", content: text },
    { role: "assistant", content: [use("a")] },
    {
      role: "user",
      content: [res("a")],
    },
  ], true],
  ["use at the end", [{ role: "assistant", content: [use("a"), use("b")] }], true],
  ["result first", [{ role: "user", content: [res("a")] }], false],
  ["result mixed with text", [{ role: "assistant", content: [use("a")] }, {
    role: "user",
    content: [res("a"), text],
  }], false],
  ["ids differ", [{ role: "assistant", content: [use("a")] }, {
    role: "user",
    content: [res("b")],
  }], false],
  ["missing result", [{ role: "assistant", content: [use("a"), use("b")] }, {
    role: "user",
    content: [res("a")],
  }], false],
  ["use not answered", [{ role: "assistant", content: [use("a")] }, {
    role: "user",
    content: text,
  }], false],
  ["result by the assistant", [{ role: "assistant", content: [use("a")] }, {
    role: "assistant",
    content: [res("a")],
  }], false],
];
for (const [name, messages, ok] of cases) {
  Deno.test(`sampling tool result rules: ${name}`, () =>
    strictEqual(obeysToolResultRules(messages), ok));
}

Deno.test("declared capabilities: elicitation {} means form; url needs its member", () => {
  deepStrictEqual(declaredOf({ elicitation: {} }), {
    form: true,
    url: false,
    sampling: false,
    samplingTools: false,
    roots: false,
  });
  deepStrictEqual(declaredOf({ elicitation: { url: {} }, sampling: { tools: {} }, roots: {} }), {
    form: false,
    url: true,
    sampling: true,
    samplingTools: true,
    roots: true,
  });
});

Deno.test("requestedSchema compiles with ajv (2020-12 and draft-07) and checks formats", () => {
  const validate = compileSchema({
    type: "object",
    properties: { e: { type: "string", format: "email" } },
  });
  strictEqual(validate?.({ e: "a@b.co" }), true);
  strictEqual(validate?.({ e: "nope" }), false);
  const v7 = compileSchema({
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    required: ["a"],
  });
  strictEqual(v7?.({}), false);
  strictEqual(
    compileSchema({ type: "object", properties: { a: { type: "nonsense" } } }),
    undefined,
  );
});

// Through the whole bridge, in this process (tests/input/raw_rounds.ts): the client as raw
// lines or the v1 SDK client, the raw server's tool "ask" as the upstream.

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
