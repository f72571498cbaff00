import { deepStrictEqual, strictEqual } from "node:assert/strict";
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
