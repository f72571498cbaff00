import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type Answer, PendingTable } from "../../lib/input/pending.ts";

const RESULT: Answer = { kind: "result", result: { action: "accept" } };

Deno.test("pending: ids are the prefix and a counter; each answer settles its own entry once", async () => {
  const table = new PendingTable("b-");
  const [a, b] = [table.open(), table.open()];
  deepStrictEqual([a.id, b.id, table.size], ["b-1", "b-2", 2]);
  const error: Answer = { kind: "error", error: { code: -1, message: "no" } };
  strictEqual(table.settle("b-2", error), true);
  strictEqual(table.settle("b-2", RESULT), false); // settled already
  strictEqual(table.settle("b-1", { kind: "invalid" }), true);
  deepStrictEqual([await a.answer, await b.answer, table.size], [{ kind: "invalid" }, error, 0]);
  // An id is never given twice, also after its entry is gone.
  strictEqual(table.open().id, "b-3");
});

Deno.test("pending: unknown ids, numeric ids and null are dropped", () => {
  const table = new PendingTable("b-");
  table.open();
  deepStrictEqual(
    [table.settle("b-9", RESULT), table.settle(1, RESULT), table.settle(null, RESULT)],
    [false, false, false],
  );
  strictEqual(table.size, 1);
});

Deno.test("pending: remove reports the ids that had no answer, and a late answer is dropped", async () => {
  const table = new PendingTable("b-");
  const [a, b, c] = [table.open(), table.open(), table.open()];
  table.settle(a.id, RESULT);
  deepStrictEqual(table.remove([a.id, b.id, "b-99"]), [b.id]);
  strictEqual(table.settle(b.id, RESULT), false);
  deepStrictEqual(await a.answer, RESULT);
  deepStrictEqual(table.removeAll(), [c.id]);
  deepStrictEqual([table.size, table.removeAll()], [0, []]);
});
