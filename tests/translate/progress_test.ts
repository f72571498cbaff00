import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ProgressRelay } from "../../lib/translate/progress.ts";
import type { Notification } from "../../lib/jsonrpc/message.ts";
import { server } from "../fixtures/modern_server.ts";
import { InProcessBridge } from "../frontend/in_process.ts";

Deno.test("progress relay: at most 50 per sliding second, with the client's token; none after stop", () => {
  let now = 0;
  const sent: Notification[] = [];
  const relay = new ProgressRelay(0, 50, (n) => sent.push(n), () => now);
  for (let i = 0; i < 1000; i++) {
    now = i; // 1,000 in one second
    relay.relay({ progress: i, total: 1000, message: "m" });
  }
  strictEqual(sent.length, 50);
  deepStrictEqual(sent[0], {
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: 0, progress: 0, total: 1000, message: "m" },
  });
  now = 1000;
  relay.relay({ progress: 1, total: undefined, message: undefined });
  strictEqual(sent.length, 51);
  deepStrictEqual(sent[50]!.params, { progressToken: 0, progress: 1 });
  relay.stop();
  now = 5000;
  relay.relay({ progress: 2, total: undefined, message: undefined });
  strictEqual(sent.length, 51);
});

Deno.test("progress relay drops a progress value that is not a number", () => {
  const sent: Notification[] = [];
  const relay = new ProgressRelay("t", 50, (n) => sent.push(n));
  relay.relay({ progress: "x", total: undefined, message: undefined });
  strictEqual(sent.length, 0);
});

// The relay on the wire: the bridge of the command line in process, the SDK v2 fixture over the memory link.

Deno.test("a flood of 1,000 progress notifications in one second: at most ~50 reach the client, none after the response", async () => {
  await using bridge = new InProcessBridge([], server);
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
  await using bridge = new InProcessBridge([], server);
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
