import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { compileSchema } from "../../lib/input/form_schema.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";
import {
  answerAll,
  ask,
  FORM_CAPS,
  formOf,
  inputResponses,
  type Obj,
  startRaw,
} from "./raw_rounds.ts";

const form = (properties: JsonObject, extra: JsonObject = {}): JsonObject => ({
  type: "object",
  properties,
  ...extra,
});

Deno.test("form schema: the same $id compiles again, at the root and in a subschema", () => {
  const schema = form(
    { a: { $id: "https://forms.example/a", type: "string" } },
    { $id: "https://forms.example/root", required: ["a"] },
  );
  for (let round = 1; round <= 3; round++) {
    const check = compileSchema(structuredClone(schema));
    ok(check, `round ${round}: the schema compiles`);
    strictEqual(check({ a: "x" }), true);
    strictEqual(check({ a: 1 }), false);
  }
});

Deno.test("form schema: memory does not grow with the forms (1,000 $id forms, heap after a full GC)", async () => {
  const script = fileURLToPath(new URL("./form_schema_memory.ts", import.meta.url));
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    // V8's cache of compiled code keeps the source of each function for a while; it is bounded
    // by age, not by the forms, so the measure leaves it out.
    args: ["run", "-q", "--v8-flags=--expose-gc,--no-compilation-cache", "-R", script, "1000"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout);
  strictEqual(code, 0, new TextDecoder().decode(stderr));
  const growth = Number(text.trim());
  // The shared ajv kept about 7 KB a form (7 MB here); now under 1 MB in all, as for 5,000.
  ok(growth < 3 * 1024 * 1024, `the heap grew by ${growth} bytes`);
});

Deno.test("form schema: $async is refused (its check is a promise that rejects)", () => {
  strictEqual(compileSchema(form({ a: { type: "string" } }, { $async: true })), undefined);
  strictEqual(
    compileSchema(
      form({ a: { $ref: "#/$defs/x" } }, { $defs: { x: { $async: true, type: "string" } } }),
    ),
    undefined,
  );
});

Deno.test("form schema: subschemas that refer to each other in a loop are refused", () => {
  strictEqual(
    compileSchema(form({ a: { type: "string" } }, { allOf: [{ $ref: "#" }] })),
    undefined,
  );
  strictEqual(
    compileSchema(form({ a: { type: "string" } }, { required: ["a"], anyOf: [{ $ref: "#" }] })),
    undefined,
  );
  strictEqual(compileSchema(form({ a: { allOf: [{ $ref: "#/properties/a" }] } })), undefined);
  // A reference that descends into the value is no loop: a tree.
  const tree = compileSchema(form({ kids: { type: "array", items: { $ref: "#" } } }));
  ok(tree);
  strictEqual(tree({ kids: [{ kids: [] }, {}] }), true);
  strictEqual(tree({ kids: [{ kids: 1 }] }), false);
});

/** `{ x: { x: ... } }`, `depth` levels. */
function nested(depth: number): JsonObject {
  let value: JsonObject = {};
  for (let i = 0; i < depth; i++) value = { x: value };
  return value;
}

Deno.test("form schema: the work of a check is bounded before ajv runs", () => {
  // 24 anyOf of two references to the next: 2^24 paths; ajv took 4 GB and crashed.
  const defs: JsonObject = {};
  for (let i = 0; i < 24; i++) {
    defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  }
  defs.a24 = { type: "number" };
  strictEqual(compileSchema(form({ x: { $ref: "#/$defs/a0" } }, { $defs: defs })), undefined);
  // Two ways into each level of the value: 2^depth paths, fine for a form, not for 40 levels.
  const check = compileSchema(form({}, {
    anyOf: [{ properties: { x: { $ref: "#" } } }, { properties: { x: { $ref: "#" } } }],
  }));
  ok(check);
  strictEqual(check(nested(3)), true);
  strictEqual(check(nested(40)), false);
});

Deno.test("form schema: a check that throws is an answer that is not valid", () => {
  const check = compileSchema(form({ x: { $ref: "#" } }));
  ok(check);
  strictEqual(check(nested(10)), true);
  // The client's parser allows 64 levels; deeper still gives an answer, not a crash.
  strictEqual(check(nested(200_000)), false);
});

Deno.test("form schema: patterns match with RE2 (a lookbehind does not compile), in linear time", () => {
  const check = compileSchema(form({ a: { type: "string", pattern: "^(a+)+$" } }));
  ok(check);
  strictEqual(check({ a: "a".repeat(28) }), true);
  strictEqual(check({ a: "a".repeat(100_000) + "!" }), false);
  strictEqual(compileSchema(form({ a: { pattern: "(?<=a)b" } })), undefined);
  strictEqual(compileSchema(form({}, { patternProperties: { "x(?!y)": {} } })), undefined);
  const password = compileSchema(form({ p: { type: "string", pattern: "^(?=.*\\d).{4,}$" } }));
  strictEqual(password?.({ p: "abc1" }), true);
  strictEqual(password?.({ p: "abcd" }), false);
  strictEqual(compileSchema(form({ a: { pattern: "(a)\\1" } })), undefined);
});

Deno.test("form schema: each pattern of a schema applies (patterns, patternProperties, additionalProperties)", () => {
  const check = compileSchema(form({
    a: { type: "string", pattern: "^a\\d$" },
    b: { type: "string", pattern: "^b\\u{1F600}$" },
    c: { type: "string", pattern: "^C$" },
  }, {
    patternProperties: { "^x-": { type: "number" }, "^y-": { type: "string" } },
    additionalProperties: false,
  }));
  ok(check);
  strictEqual(check({ a: "a1", b: "b\u{1F600}", c: "C", "x-1": 1, "y-1": "s" }), true);
  strictEqual(check({ a: "b1" }), false);
  strictEqual(check({ b: "bx" }), false);
  strictEqual(check({ c: "c" }), false, "no case folding without the flag i");
  strictEqual(check({ "x-1": "s" }), false);
  strictEqual(check({ "y-1": 1 }), false);
  strictEqual(check({ z: 1 }), false);
});

const URLS = [
  "http://example.com",
  "https://user:pw@example.com:8080/path?q=1#f",
  "ftp://files.example.org/a",
  "http://8.8.8.8/",
  "http://10.0.0.1/",
  "http://127.0.0.1:3000",
  "http://192.168.1.1",
  "http://169.254.0.1",
  "http://172.16.0.1",
  "http://172.32.0.1",
  "http://10.0.0.1.example.com/",
  "http://a@10.1.2.3/x",
  "http://example",
  "mailto:a@b.co",
  "http://exa mple.com",
  "http://xn--bcher-kva.example/",
  "http://bücher.example/",
  "http://223.255.255.254",
  "http://224.0.0.1",
];

Deno.test("form schema: the url format agrees with ajv-formats on plain cases, in linear time", () => {
  const check = compileSchema(form({ u: { type: "string", format: "url" } }));
  ok(check);
  const native = fullFormats.url as RegExp;
  for (const url of URLS) strictEqual(check({ u: url }), native.test(url), url);
  // Native: several seconds for 60 KB (catastrophic backtracking).
  strictEqual(check({ u: "http://" + "a:1".repeat(20_000) + "!" }), false);
});

Deno.test("form schema: formats still check (email, date, uuid, hostname, duration)", () => {
  const check = compileSchema(form({
    e: { format: "email" },
    d: { format: "date" },
    u: { format: "uuid" },
    h: { format: "hostname" },
    p: { format: "duration" },
  }));
  ok(check);
  const good = {
    e: "a@b.co",
    d: "2026-12-03",
    u: "123e4567-e89b-12d3-a456-426614174000",
    h: "example.com",
    p: "P1DT2H",
  };
  strictEqual(check(good), true);
  for (const [key, bad] of Object.entries({ e: "a", d: "2026-13-40", u: "x", h: "-a", p: "P" })) {
    strictEqual(check({ ...good, [key]: bad }), false, key);
  }
  deepStrictEqual(compileSchema(form({ a: { format: "no-such-format" } }))?.({ a: "x" }), true);
});

// requestedSchemas of the upstream server through the whole bridge, in this process
// (tests/input/raw_rounds.ts): what cannot be checked safely never reaches the client,
// crashes or stalls the bridge.

const start = () => startRaw(FORM_CAPS);
const NAME = { name: { type: "string", minLength: 2 } };
const WITH_ID = formOf({
  $id: "https://forms.example/name",
  type: "object",
  properties: NAME,
  required: ["name"],
});

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
