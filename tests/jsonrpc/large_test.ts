/** A large result in slices: the bytes of JSON.stringify, without one large string. */

import { deepStrictEqual } from "node:assert/strict";

Deno.test("the sliced path writes the bytes of JSON.stringify: escapes, lone surrogates, pairs at a cut, deep values", async () => {
  const { markLarge, serializeInChunks } = await import("../../lib/jsonrpc/large.ts");
  const SLICE = 256 * 1024;
  let deep: unknown = "leaf";
  // Deeper than the replacer of JSON.stringify could go (about 2,700 levels).
  for (let i = 0; i < 4_000; i++) deep = [deep];
  const cases: Record<string, unknown>[] = [
    { plain: "a".repeat(SLICE * 3 + 17) },
    { escapes: 'q"\\\n\u0001'.repeat(SLICE / 2) },
    { lone: "a".repeat(SLICE - 1) + "\ud800" + "b".repeat(SLICE) + "\udc00" },
    { pair: "a".repeat(SLICE - 1) + "😀" + "é".repeat(SLICE) },
    { list: ["x".repeat(SLICE + 1), 1, null, { k: "y".repeat(SLICE + 2) }], deep },
  ];
  for (const result of cases) {
    markLarge(result as never);
    const message = { jsonrpc: "2.0" as const, id: 7, result: result as never };
    const before = JSON.stringify(message);
    const chunks = [...serializeInChunks(message)];
    const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) bytes.set(c, (at += c.length) - c.length);
    deepStrictEqual(
      new TextDecoder().decode(bytes) === before + "\n",
      true,
      Object.keys(result).join(),
    );
    // The message is the same after the call.
    deepStrictEqual(JSON.stringify(message) === before, true);
  }
});

Deno.test("the sliced path writes an exact id (a RawId) as it is, also a long one", async () => {
  const { markLarge, serializeInChunks } = await import("../../lib/jsonrpc/large.ts");
  const { idOfToken } = await import("../../lib/jsonrpc/message.ts");
  for (const token of ["9007199254740993", '"' + "\\u0041".repeat(60_000) + '"']) {
    const result = { text: "z".repeat(300_000) };
    markLarge(result);
    const message = { jsonrpc: "2.0" as const, id: idOfToken(token)!, result };
    const text = [...serializeInChunks(message)].map((c) => new TextDecoder().decode(c)).join("");
    deepStrictEqual(text.startsWith(`{"jsonrpc":"2.0","id":${token},"result":{"text":"zzz`), true);
    deepStrictEqual(text, JSON.stringify(message) + "\n");
  }
});
