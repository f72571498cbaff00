import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type Answer, PendingTable } from "../../lib/bridge/pending.ts";

const roots: Answer = { kind: "result", result: { roots: [] } };

/** The answer of `promise` if it settled by the next macrotask, else "pending". */
async function settled<T>(promise: Promise<T>): Promise<T | "pending"> {
  return await Promise.race([promise, new Promise<"pending">((r) => setTimeout(r, 0, "pending"))]);
}

Deno.test("pending: ids take the prefix and count up; settle gives the answer once", async () => {
  const table = new PendingTable("b-");
  const a = table.open();
  const b = table.open();
  deepStrictEqual([a.id, b.id, table.size], ["b-1", "b-2", 2]);
  strictEqual(table.settle("b-2", roots), true);
  deepStrictEqual(await b.answer, roots);
  strictEqual(table.size, 1);
  strictEqual(await settled(a.answer), "pending");
});

Deno.test("pending: unknown, numeric and null ids, and late answers, are dropped", async () => {
  const table = new PendingTable("b-");
  const entry = table.open();
  strictEqual(table.settle("b-99", roots), false);
  strictEqual(table.settle(1, roots), false, "a numeric id never matches b-1");
  strictEqual(table.settle(null, roots), false);
  strictEqual(table.settle("1", roots), false, "the id without the prefix");
  strictEqual(await settled(entry.answer), "pending");
  const error: Answer = { kind: "error", error: { code: -1, message: "no" } };
  strictEqual(table.settle("b-1", error), true);
  strictEqual(table.settle("b-1", roots), false, "a second answer is late");
  deepStrictEqual(await entry.answer, error);
  strictEqual(table.size, 0);
});

Deno.test("pending: remove gives the requests without an answer, before their notifications/cancelled", async () => {
  const table = new PendingTable("q");
  const [a, b, c] = [table.open(), table.open(), table.open()];
  table.settle(b.id, { kind: "invalid" });
  deepStrictEqual(table.remove([a.id, b.id, c.id]), ["q1", "q3"]);
  strictEqual(table.size, 0);
  // The entries are gone first: an answer that crosses the notification is dropped.
  strictEqual(table.settle(a.id, roots), false);
  deepStrictEqual(table.remove([a.id]), [], "removed once");
  strictEqual(await settled(a.answer), "pending", "a removed entry never settles");
  deepStrictEqual(await b.answer, { kind: "invalid" });
});

Deno.test("pending: removeAll at the end of the input gives every open id; new ids do not repeat", () => {
  const table = new PendingTable("b-");
  table.open();
  table.open();
  table.settle("b-1", roots);
  deepStrictEqual(table.removeAll(), ["b-2"]);
  deepStrictEqual(table.removeAll(), []);
  strictEqual(table.open().id, "b-3");
});
