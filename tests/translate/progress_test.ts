import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ProgressRelay } from "../../lib/translate/progress.ts";
import type { Notification } from "../../lib/jsonrpc/message.ts";

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
