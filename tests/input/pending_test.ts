import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { RAW_SERVER } from "../process/helpers.ts";
import { ALL_CAPS, errorData, type Obj, result, ROOTS, startRaw } from "./raw_rounds.ts";
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

// Through the whole bridge, in this process (tests/input/raw_rounds.ts): the client as raw
// lines or the v1 SDK client, the raw server's tool "ask" as the upstream.

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

Deno.test("the upstream stops while the bridge waits for answers: questions canceled, the request gets upstream_exited", async () => {
  // The raw server as a child: it stops its process.
  await using bridge = await startRaw(ALL_CAPS, [], RAW_SERVER("ok"));
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
