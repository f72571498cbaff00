import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertExcludes } from "../assert.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  escapePointerToken,
  type ItemsEvent,
  normalizeArrayItems,
} from "../../lib/translate/items_rule.ts";
import { applyResultRules } from "../../lib/translate/results.ts";
import type { Json, JsonObject } from "../../lib/jsonrpc/message.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

function run(schema: Json): { schema: Json; events: ItemsEvent[] } {
  const copy = structuredClone(schema);
  const events: ItemsEvent[] = [];
  normalizeArrayItems(copy, (e) => events.push(e));
  return { schema: copy, events };
}

const table: [string, Json, Json][] = [
  ["no items", { type: "array" }, { type: "array", items: {} }],
  ["items null", { type: "array", items: null }, { type: "array", items: {} }],
  ["items 0", { type: "array", items: 0 }, { type: "array", items: {} }],
  ['items ""', { type: "array", items: "" }, { type: "array", items: {} }],
  ["items false", { type: "array", items: false }, { type: "array", items: {}, maxItems: 0 }],
  [
    "items false with prefixItems",
    { type: "array", prefixItems: [{ type: "string" }, {}], items: false },
    { type: "array", prefixItems: [{ type: "string" }, {}], items: {}, maxItems: 2 },
  ],
  [
    "items false with a smaller maxItems",
    { type: "array", prefixItems: [{}, {}], items: false, maxItems: 1 },
    { type: "array", prefixItems: [{}, {}], items: {}, maxItems: 1 },
  ],
  ["items true stays", { type: "array", items: true }, { type: "array", items: true }],
  ["a type array stays", { type: ["array", "null"] }, { type: ["array", "null"] }],
  ["not an array schema", { type: "object", items: false }, { type: "object", items: false }],
];
for (const [name, input, output] of table) {
  Deno.test(`R6: ${name}`, () => deepStrictEqual(run(input).schema, output));
}

const KEYWORDS = [
  "properties",
  "patternProperties",
  "dependencies",
  "dependentSchemas",
  "$defs",
  "definitions",
];
Deno.test("R6 walks every keyword of the list, with RFC 6901 pointers", () => {
  const array = () => ({ type: "array" });
  const schema: JsonObject = {};
  for (const key of KEYWORDS) schema[key] = { "a/b~c": array() };
  for (const key of ["additionalProperties", "not", "if", "then", "else", "contains", "items"]) {
    schema[key] = array();
  }
  for (const key of ["anyOf", "allOf", "oneOf", "prefixItems"]) schema[key] = [{}, array()];
  schema.type = "object";
  const { events } = run(schema);
  const pointers = events.map((e) => e.pointer).sort();
  deepStrictEqual(
    pointers,
    [
      ...KEYWORDS.map((k) => `/${escapePointerToken(k)}/a~1b~0c`),
      "/additionalProperties",
      "/not",
      "/if",
      "/then",
      "/else",
      "/contains",
      "/items",
      "/anyOf/1",
      "/allOf/1",
      "/oneOf/1",
      "/prefixItems/1",
    ].sort(),
  );
  deepStrictEqual(events.filter((e) => e.kind !== "changed"), []);
});

Deno.test("R6 stops at the depth limit with one info line and leaves the deeper schema", () => {
  let deep: JsonObject = { type: "array" };
  for (let i = 0; i < 70; i++) deep = { type: "object", properties: { p: deep } };
  const { schema, events } = run(deep);
  deepStrictEqual(events.map((e) => e.kind), ["too_deep"]);
  strictEqual(events[0]!.pointer, "/properties/p".repeat(65));
  assertExcludes(JSON.stringify(schema), '"items"');
});

Deno.test("R6 logs one info line per change with the tool name and the pointer", () => {
  const lines: string[] = [];
  const log = { error() {}, warn() {}, debug() {}, info: (m: string) => lines.push(m) };
  applyResultRules("tools/list", {
    tools: [{
      name: "t",
      inputSchema: {
        type: "object",
        properties: { "x/y": { type: "array" }, z: { type: "array", items: false } },
      },
    }],
  }, { quirks: VSCODE_PROFILE.quirks, icons: "all", log });
  deepStrictEqual(lines.sort(), [
    "tool 't': gave the array schema at /properties/x~1y an items schema",
    "tool 't': gave the array schema at /properties/z an items schema",
  ]);
});

// Property test: the normalised schema accepts exactly the arrays that the original accepted.
function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

function randomSchema(r: () => number, depth: number): JsonObject {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  if (depth > 3 || r() < 0.3) {
    return pick([{ type: "string" }, { type: "number" }, { type: "integer" }, {}]);
  }
  const s: JsonObject = { type: "array" };
  const itemsChoice = pick(["none", "null", "zero", "empty", "false", "schema"]);
  if (itemsChoice === "null") s.items = null;
  if (itemsChoice === "zero") s.items = 0;
  if (itemsChoice === "empty") s.items = "";
  if (itemsChoice === "false") s.items = false;
  if (itemsChoice === "schema") s.items = randomSchema(r, depth + 1);
  if (r() < 0.5) {
    s.prefixItems = Array.from(
      { length: 1 + Math.floor(r() * 2) },
      () => randomSchema(r, depth + 1),
    );
  }
  if (r() < 0.3) s.maxItems = Math.floor(r() * 4);
  if (r() < 0.2) s.minItems = Math.floor(r() * 2);
  return s;
}

function randomValue(r: () => number, depth: number): Json {
  const k = r();
  if (depth > 3 || k < 0.3) return r() < 0.5 ? Math.floor(r() * 5) : "s";
  return Array.from({ length: Math.floor(r() * 5) }, () => randomValue(r, depth + 1));
}

/** Ajv cannot compile the falsy items values that R6 repairs; they mean "no items" (`true`). */
function asAjvSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(asAjvSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "items" && (v === null || v === 0 || v === "")) continue;
    out[k] = asAjvSchema(v);
  }
  return out;
}

Deno.test("R6 property: the normalised schema accepts exactly the same arrays (ajv, 300 schemas)", () => {
  const ajv = new Ajv2020({ strict: false });
  const r = rng(42);
  let checked = 0;
  for (let i = 0; i < 300; i++) {
    const original = randomSchema(r, 0);
    const normalized = run(original).schema;
    const before = ajv.compile(asAjvSchema(original) as object);
    const after = ajv.compile(normalized as object);
    for (let j = 0; j < 40; j++) {
      const value = randomValue(r, 0);
      strictEqual(
        after(value),
        before(value),
        `${JSON.stringify(original)} on ${JSON.stringify(value)}`,
      );
      checked++;
    }
    // Every array schema now has a truthy items.
    const stack: Json[] = [normalized];
    while (stack.length) {
      const node = stack.pop();
      if (typeof node !== "object" || node === null || Array.isArray(node)) continue;
      if (node.type === "array") ok(node.items, JSON.stringify(node));
      for (const v of Object.values(node)) Array.isArray(v) ? stack.push(...v) : stack.push(v);
    }
  }
  strictEqual(checked, 12000);
});
