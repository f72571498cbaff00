import { strictEqual } from "node:assert/strict";
import { SchemaGraph } from "../../lib/input/schema_cost.ts";
import type { Json, JsonObject } from "../../lib/jsonrpc/message.ts";

const LOOPS: [string, JsonObject][] = [
  ["$ref to the root", { allOf: [{ $ref: "#" }] }],
  ["$ref to itself", { $defs: { a: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }],
  ["two definitions", { $defs: { a: { $ref: "#/$defs/b" }, b: { not: { $ref: "#/$defs/a" } } } }],
  ["an anchor", { $defs: { a: { $anchor: "here", anyOf: [{ $ref: "#here" }] } } }],
  ["a draft-07 anchor", { definitions: { a: { $id: "#here", oneOf: [{ $ref: "#here" }] } } }],
  ["an embedded $id", {
    $defs: { a: { $id: "https://forms.example/a", if: { $ref: "a" } } },
  }],
  ["a relative $id", {
    $id: "https://forms.example/root/",
    $defs: { a: { $id: "sub", then: { $ref: "https://forms.example/root/sub" } } },
  }],
  ["an escaped pointer", { $defs: { "a/b~c": { else: { $ref: "#/$defs/a~1b~0c" } } } }],
  ["a percent-encoded pointer", { $defs: { "a b": { allOf: [{ $ref: "#/$defs/a%20b" }] } } }],
  ["a dynamic reference", { $dynamicAnchor: "node", anyOf: [{ $dynamicRef: "#node" }] }],
  ["dependentSchemas", { dependentSchemas: { a: { $ref: "#" } } }],
  ["draft-07 dependencies", { dependencies: { a: { $ref: "#" }, b: ["c"] } }],
];
for (const [name, schema] of LOOPS) {
  Deno.test(`schema cost: a loop in place is refused: ${name}`, () => {
    strictEqual(SchemaGraph.of(schema, 100), undefined);
  });
}

const NO_LOOPS: [string, JsonObject][] = [
  ["a reference under properties", { properties: { a: { $ref: "#" } } }],
  ["under items", { items: { $ref: "#" } }],
  ["under additionalProperties", { additionalProperties: { $ref: "#" } }],
  ["a reference outside the schema", { $ref: "https://json-schema.org/draft/2020-12/schema" }],
  ["a pointer that leads nowhere", { allOf: [{ $ref: "#/nothing" }] }],
];
for (const [name, schema] of NO_LOOPS) {
  Deno.test(`schema cost: no loop: ${name}`, () => {
    strictEqual(SchemaGraph.of(schema, 100) !== undefined, true);
  });
}

const graph = (schema: JsonObject, limit = 1000) => SchemaGraph.of(schema, limit)!;

const ANSWERS: [string, JsonObject, Json, number][] = [
  ["a plain schema and a string", { type: "string" }, "x", 1],
  ["properties that match", { properties: { a: {}, b: {} } }, { a: 1, c: 2 }, 2],
  [
    "each pattern and additionalProperties for each member",
    {
      patternProperties: { "^a": {}, "^b": {} },
      additionalProperties: {},
    },
    { a: 1, b: 2 },
    7,
  ],
  ["propertyNames for each key", { propertyNames: { allOf: [{}] } }, { a: 1, b: 2 }, 5],
  ["prefixItems then items", { prefixItems: [{}], items: {} }, [1, 2, 3], 5],
  ["contains for each item", { contains: {} }, [1, 2], 3],
  ["in place: allOf, if, then, else", { allOf: [{}, {}], if: {}, then: {}, else: {} }, {}, 6],
  [
    "a shared definition counts each path",
    {
      $defs: { d: { anyOf: [{}, {}] } },
      allOf: [{ $ref: "#/$defs/d" }, { $ref: "#/$defs/d" }],
    },
    1,
    1 + 2 * (1 + 3),
  ],
  ["uniqueItems compares each pair", { uniqueItems: true }, [1, 2, 3, 4], 1 + 6],
  [
    "uniqueItems of declared scalars uses a table",
    {
      uniqueItems: true,
      items: { type: "string" },
    },
    ["a", "b", "c", "d"],
    1 + 4 + 4,
  ],
  ["an outside reference counts once", { $ref: "https://json-schema.org/draft/2020-12/schema" }, {
    a: 1,
  }, 1],
];
for (const [name, schema, value, expected] of ANSWERS) {
  Deno.test(`schema cost of an answer: ${name}`, () => {
    strictEqual(graph(schema).answerCost(value), expected);
  });
}

Deno.test("schema cost: paths that double at each level saturate at the limit", () => {
  const defs: JsonObject = {};
  for (let i = 0; i < 60; i++) {
    defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  }
  const dag = graph({ $ref: "#/$defs/a0", $defs: defs }, 1000);
  strictEqual(dag.staticCost(0), 1001);
  strictEqual(dag.answerCost("x"), 1001);
});

Deno.test("schema cost: the static cost counts each level of a value as if each name were there", () => {
  const twice = graph({
    anyOf: [{ properties: { x: { $ref: "#" } } }, { properties: { x: { $ref: "#" } } }],
  });
  strictEqual(twice.staticCost(0), 3);
  // Each level: the root, two branches, and in each branch the reference and what it gives.
  strictEqual(twice.staticCost(1), 3 + 2 * (1 + 3));
  let value: JsonObject = {};
  for (let i = 0; i < 30; i++) value = { x: value };
  strictEqual(twice.answerCost(value), 1001);
});

Deno.test("schema cost: the count stops at the limit, also for a large answer", () => {
  const members: JsonObject = {};
  for (let i = 0; i < 200_000; i++) members[`m${i}`] = [i];
  const each = graph({ additionalProperties: { items: { anyOf: [{}, {}] } } }, 1000);
  strictEqual(each.answerCost(members), 1001);
  // Each member: additionalProperties (1) and its items on the one item (1 + 2).
  strictEqual(each.answerCost({ a: [1], b: [2] }), 1 + 2 * (1 + 3));
});

// Through the whole bridge: tests/process/input_stall_test.ts (a stall of the bridge in this
// process would stop the test's timer too).
