import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertSomeIncludes } from "../assert.ts";
import { streamFilter } from "../../lib/listen/listen_stream.ts";
import { FakeTime } from "../fake_time.ts";
import { RAW_SERVER } from "../process/helpers.ts";
import { waitFor } from "../wait.ts";
import { startFrontend } from "../frontend/harness.ts";

Deno.test("stream filter: the declared lists and every subscribed URI", () => {
  deepStrictEqual(streamFilter(new Set(["tools", "resources"]), ["a", "b"]), {
    toolsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: ["a", "b"],
  });
});

type Obj = Record<string, unknown>;

Deno.test("lost streams: a new stream after each loss, for as long as they fail, the waits doubling to the maximum", async () => {
  const t = startFrontend(
    { listen_backoff_ms: 20, listen_max_backoff_ms: 40 },
    RAW_SERVER("listen"),
  );
  await t.initialize();
  // The first stream and the next five end before their acknowledgment; the seventh lives.
  await t.call("n", "next_listen", { what: "end", count: 6 });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  deepStrictEqual((await t.next()).method, "notifications/tools/list_changed");
  deepStrictEqual((await t.next()).method, "notifications/prompts/list_changed");
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  strictEqual(((state.structuredContent as Obj).filters as unknown[]).length, 7);
  deepStrictEqual(
    t.logs.filter((l) => l.includes("a new stream opens in")).map((l) =>
      l.split(" in ").at(-1)!.trim()
    ),
    ["20 ms", "40 ms", "40 ms", "40 ms", "40 ms", "40 ms"],
  );
  ok(!t.logs.some((l) => l.includes("waiting for a change")), t.logs.join("\n"));
  strictEqual(await t.close(), 0);
});

Deno.test("no acknowledgment in the limit: the stream is canceled and a new one opens after a wait", async () => {
  const t = startFrontend(
    { listen_backoff_ms: 20, listen_ack_timeout_ms: 100 },
    RAW_SERVER("listen"),
  );
  await t.initialize();
  await t.call("n", "next_listen", { what: "silent" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The second stream acknowledges: one event per declared list.
  deepStrictEqual((await t.next()).method, "notifications/tools/list_changed");
  deepStrictEqual((await t.next()).method, "notifications/prompts/list_changed");
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  const s = state.structuredContent as Obj;
  deepStrictEqual([(s.filters as unknown[]).length, (s.cancelled as unknown[]).length], [2, 1]);
  assertSomeIncludes(t.logs, "no acknowledgment in 100 ms");
  strictEqual(await t.close(), 0);
});

Deno.test("a stream that lives the healthy time after its acknowledgment resets the wait (fake time)", async () => {
  const time = new FakeTime();
  const t = startFrontend(
    {
      listen_backoff_ms: 20,
      listen_max_backoff_ms: 1000,
      listen_healthy_ms: 300,
    },
    RAW_SERVER("listen"),
    time,
  );
  await t.initialize();
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await t.next(); // the events of the first acknowledgment
  await t.next();
  const waits = () =>
    t.logs.filter((l) => l.includes("a new stream opens in")).map((l) =>
      l.split(" in ").at(-1)!.trim()
    );
  const lose = async (id: string) => {
    const before = waits().length;
    await t.call(id, "end_listens");
    // The new stream opens when the wait is over, and not before.
    await waitFor("the wait of the new stream", () => waits().length > before);
    const wait = time.pending.at(-1)!;
    await time.tick(wait - 1);
    strictEqual(waits().length, before + 1);
    await time.tick(1);
    await t.next(); // the events of the new stream's acknowledgment
    await t.next();
  };
  await lose("a"); // short life: 20 ms
  await lose("b"); // short life: 40 ms
  await time.tick(300); // this stream lives the healthy time
  await lose("c");
  deepStrictEqual(waits(), ["20 ms", "40 ms", "20 ms"]);
  strictEqual(await t.close(), 0);
});
