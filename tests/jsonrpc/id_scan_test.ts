import { deepStrictEqual } from "node:assert/strict";
import { isBridgeId, scanIdFromHead, scanIdFromTail } from "../../lib/jsonrpc/id_scan.ts";

const enc = new TextEncoder();

const head: [string, unknown][] = [
  ['{"jsonrpc":"2.0","id":7,"method":', { found: true, id: 7 }],
  ['{"id":"a\\"b","x":', { found: true, id: 'a"b' }],
  ['{"params":{"id":1},"id":"b-2",', { found: true, id: "b-2" }],
  ['{"params":{"id":1},"x":', { found: false }],
  ['{"x":"\\"id\\":5","id":-3,', { found: true, id: -3 }],
  ['{"id":null,"x":', { found: true, id: null }],
  ['{"id":1.5,', { found: true, id: null }],
  ['{"id":{"a":1},', { found: true, id: null }],
  ['{"id":12', { found: false }], // cut: the number may go on
  ["[1,2]", { found: false }],
  ['{ "id" : "x" }', { found: true, id: "x" }],
];
for (const [text, expected] of head) {
  Deno.test(`id scan from the head: ${text}`, () =>
    deepStrictEqual(scanIdFromHead(enc.encode(text)), expected));
}

const tail: [string, unknown][] = [
  ['xxxxx"},"jsonrpc":"2.0","id":42}', { found: true, id: 42 }],
  ['aaa","id":"b-7"}', { found: true, id: "b-7" }],
  ['aaa","id":"b-7"}  \r', { found: true, id: "b-7" }],
  ['aaa","id":null}', { found: true, id: null }],
  ['aaa","xid":5}', { found: false }],
  ['aaa","id":5]', { found: false }],
  ['a\\",\\"id\\":5}', { found: false }],
];
for (const [text, expected] of tail) {
  Deno.test(`id scan from the tail: ${text}`, () =>
    deepStrictEqual(scanIdFromTail(enc.encode(text)), expected));
}

Deno.test("ids with the prefix belong to the bridge", () => {
  deepStrictEqual([isBridgeId("b-1", "b-"), isBridgeId("a-1", "b-"), isBridgeId(1, "b-")], [
    true,
    false,
    false,
  ]);
});
