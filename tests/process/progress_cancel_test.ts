/** Progress and cancellation over the real program and a real SDK v2 upstream. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, MODERN_SERVER } from "./helpers.ts";
import { waitFor } from "../wait.ts";

Deno.test("a flood of 1,000 progress notifications in one second: at most ~50 reach the client, none after the response", async () => {
  await using bridge = new BridgeProcess([], MODERN_SERVER);
  await bridge.initialize();
  await bridge.request(2, "tools/call", {
    name: "flood",
    arguments: { count: 1000, spanMs: 0 },
    _meta: { progressToken: 0 },
  });
  const started = Date.now();
  const progress: Record<string, unknown>[] = [];
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error("no response");
    if (msg.id === 2) break;
    strictEqual(msg.method, "notifications/progress");
    progress.push(msg.params as Record<string, unknown>);
  }
  const seconds = Math.ceil((Date.now() - started) / 1000);
  strictEqual(
    progress.length >= 10 && progress.length <= 50 * seconds,
    true,
    `got ${progress.length} in ${seconds} s`,
  );
  strictEqual(
    progress.every((p) =>
      p.progressToken === 0 && p.total === 1000 && typeof p.message === "string"
    ),
    true,
  );
  await bridge.request(3, "ping");
  deepStrictEqual((await bridge.next())?.id, 3); // nothing after the response
});

Deno.test("progress is keyed by request: concurrent requests with the token 0 get only their own", async () => {
  await using bridge = new BridgeProcess([], MODERN_SERVER);
  await bridge.initialize();
  for (const id of ["a", "b"]) {
    await bridge.request(id, "tools/call", {
      name: "flood",
      arguments: { count: id === "a" ? 5 : 7, spanMs: 200 },
      _meta: { progressToken: 0 },
    });
  }
  await bridge.request("c", "tools/call", { name: "flood", arguments: { count: 3, spanMs: 100 } });
  const totals: Record<string, number[]> = {};
  const done = new Set();
  const order: unknown[] = [];
  while (done.size < 3) {
    const msg = await bridge.next();
    if (msg === null) throw new Error("no response");
    order.push(msg.id ?? "progress");
    if ("id" in msg) done.add(msg.id);
    else {
      const p = msg.params as { total: number; progress: number };
      (totals[p.total] ??= []).push(p.progress);
    }
  }
  deepStrictEqual(totals, { 5: [1, 2, 3, 4, 5], 7: [1, 2, 3, 4, 5, 6, 7] }); // none for "c": it gave no token
});

Deno.test("a canceled request gets no response; the upstream sees the cancel with the reason", async () => {
  await using bridge = new BridgeProcess([], MODERN_SERVER);
  await bridge.initialize();
  await bridge.request(2, "tools/call", {
    name: "slow",
    arguments: { ms: 5000 },
    _meta: { progressToken: "t" },
  });
  await waitFor("the slow call upstream", () => bridge.stderr.includes("fixture: slow started"));
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 2, reason: "user" },
  });
  await bridge.request(3, "tools/call", { name: "echo", arguments: { text: "x" } });
  deepStrictEqual((await bridge.next())?.id, 3);
  // The slow tool ends at the cancel; whatever the upstream server writes for 2
  // comes before its answer to a later ping, and the bridge must drop it.
  await waitFor(
    "the cancel upstream",
    () => bridge.stderr.includes("slow canceled: the client canceled the request"),
  );
  await bridge.request(4, "ping");
  deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 4, result: {} });
  strictEqual(await bridge.exit(), 0);
  deepStrictEqual(await bridge.rest(500), []);
});

Deno.test("logging: no level, no messages; after setLevel, messages at or above it, without _meta", async () => {
  await using bridge = new BridgeProcess([], MODERN_SERVER);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "log", arguments: { level: "error" } });
  deepStrictEqual((await bridge.next())?.id, 2);
  await bridge.request(3, "logging/setLevel", { level: "warning" });
  deepStrictEqual((await bridge.next())?.id, 3);
  await bridge.request(4, "tools/call", { name: "log", arguments: { level: "info", note: "low" } });
  deepStrictEqual((await bridge.next())?.id, 4);
  await bridge.request(5, "tools/call", {
    name: "log",
    arguments: { level: "error", note: "high" },
  });
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "error", data: { note: "high" }, logger: "fixture" },
  });
  deepStrictEqual((await bridge.next())?.id, 5);
});
