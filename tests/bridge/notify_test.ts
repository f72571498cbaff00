import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertSomeIncludes } from "../assert.ts";
import { Backoff, streamFilter } from "../../lib/bridge/notify.ts";
import { RAW_SERVER } from "../process/helpers.ts";
import { waitFor } from "../wait.ts";
import { startFrontend } from "./harness.ts";

Deno.test("backoff: 0.5 s doubling up to 30 s; reset gives 0.5 s again", () => {
  const b = new Backoff(500, 30_000);
  deepStrictEqual(Array.from({ length: 9 }, () => b.take()), [
    500,
    1000,
    2000,
    4000,
    8000,
    16000,
    30000,
    30000,
    30000,
  ]);
  b.reset();
  strictEqual(b.take(), 500);
});

Deno.test("stream filter: the declared lists and every subscribed URI", () => {
  deepStrictEqual(streamFilter(new Set(["tools", "resources"]), ["a", "b"]), {
    toolsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: ["a", "b"],
  });
});

type Obj = Record<string, unknown>;

Deno.test("lost streams: at most 3 new streams after losses, then none until a change", async () => {
  const t = startFrontend(
    { listen_backoff_ms: 20, listen_max_backoff_ms: 40 },
    RAW_SERVER("listen"),
  );
  await t.initialize();
  await t.call("n", "next_listen", { what: "end", count: 10 });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await waitFor(
    "the end of the retries",
    () => t.logs.some((l) => l.includes("ended 4 times in a row; waiting for a change")),
  );
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  strictEqual(((state.structuredContent as Obj).filters as unknown[]).length, 4);
  assertSomeIncludes(t.logs, "ended 4 times in a row; waiting for a change");
  deepStrictEqual(
    t.logs.filter((l) => l.includes("a new stream opens in")).map((l) =>
      l.split(" in ").at(-1)!.trim()
    ),
    [
      "20 ms",
      "40 ms",
      "40 ms",
    ],
  );
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

Deno.test("a stream that lives the healthy time after its acknowledgment resets the wait", async () => {
  const t = startFrontend(
    {
      listen_backoff_ms: 20,
      listen_max_backoff_ms: 1000,
      listen_healthy_ms: 300,
      max_lost_stream_retries: 10,
    },
    RAW_SERVER("listen"),
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
    await t.call(id, "end_listens");
    await t.next(); // the events of the new stream's acknowledgment
    await t.next();
  };
  await lose("a"); // short life: 20 ms
  await lose("b"); // short life: 40 ms
  await new Promise((r) => setTimeout(r, 400)); // this stream lives past the healthy time
  await lose("c");
  deepStrictEqual(waits(), ["20 ms", "40 ms", "20 ms"]);
  strictEqual(await t.close(), 0);
});
