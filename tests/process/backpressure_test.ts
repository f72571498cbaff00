/**
 * Back pressure over the real program: a client that does not read, and an
 * upstream server that does not read, stop the bridge from reading instead
 * of filling its memory; nothing is lost or reordered when they read again.
 * The full-size figures (10⁶ messages) are in `deno task bench`; these runs
 * are large enough that an unbounded queue shows.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { BridgeProcess, DENO, peakRssMb, ROOT } from "./helpers.ts";
import { waitFor } from "../wait.ts";

const FLOOD_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/hostile_server.ts`];
/** Peak RSS of the bridge in these runs; an unbounded queue passes it (~110 MB per 100,000). */
const PEAK_LIMIT_MB = 250;

/** The next message; the end of the output or 20 s without one fails the test. */
async function nextOf(bridge: BridgeProcess): Promise<Record<string, unknown>> {
  const msg = await bridge.next(20_000);
  if (msg === null) throw new Error(`no message; stderr:\n${bridge.stderr}`);
  return msg;
}

Deno.test("a client that does not read stops the bridge from reading; then all responses come, in order", async () => {
  await using bridge = new BridgeProcess(["--", ...FLOOD_SERVER]);
  const total = 100_000;
  let accepted = 0;
  const writing = (async () => {
    for (let i = 0; i < total; i += 1000) {
      let text = "";
      for (let j = i; j < i + 1000; j++) text += `{"jsonrpc":"2.0","id":${j},"method":"ping"}\n`;
      await bridge.writeRaw(text);
      accepted = i + 1000;
    }
  })();
  // The client does not read: the bridge must stop taking its input (no
  // progress for half a second), long before the last ping.
  let seen = -1;
  let since = Date.now();
  await waitFor(
    "the input to stall",
    () => {
      if (seen !== accepted) [seen, since] = [accepted, Date.now()];
      return Date.now() - since > 500 || accepted === total;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  ok(accepted < total, `the bridge read all ${total} pings while nobody read its output`);
  for (let i = 0; i < total; i++) {
    const line = await bridge.line(20_000);
    strictEqual(line, `{"jsonrpc":"2.0","id":${i},"result":{}}`);
  }
  await writing;
  const peak = peakRssMb(bridge.child.pid);
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("an upstream server that sends pings without reading stops the bridge from reading it", async () => {
  await using bridge = new BridgeProcess(["--", ...FLOOD_SERVER]);
  await bridge.initialize({}, true);
  const pings = 100_000;
  await bridge.writeRaw(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { pings, stallMs: 300 } },
    }) + "\n",
  );
  const result = await nextOf(bridge);
  // All answers reached the server, in order, and its writes waited for the bridge.
  deepStrictEqual((result.result as Record<string, unknown>).structuredContent, {
    replies: pings,
    inOrder: true,
    stalled: true,
  });
  const peak = peakRssMb(bridge.child.pid);
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("log lines of the upstream server wait for a client that does not read; none is lost", async () => {
  await using bridge = new BridgeProcess(["--", ...FLOOD_SERVER]);
  await bridge.initialize({}, true);
  await bridge.writeRaw(
    '{"jsonrpc":"2.0","id":"level","method":"logging/setLevel","params":{"level":"info"}}\n',
  );
  strictEqual((await nextOf(bridge)).id, "level");
  const logs = 50_000;
  await bridge.writeRaw(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { logs, stallMs: 300 } },
    }) + "\n",
  );
  // The client does not read until the server's writes wait.
  await waitFor("the server to stall", () => bridge.stderr.includes("flood: stalled"), {
    timeoutMs: 20_000,
    intervalMs: 20,
  });
  for (let i = 0; i < logs; i++) {
    const message = await nextOf(bridge);
    deepStrictEqual(message.params, { level: "info", data: `log ${i}` });
  }
  const result = await nextOf(bridge);
  deepStrictEqual((result.result as Record<string, unknown>).structuredContent, {
    replies: 0,
    inOrder: true,
    stalled: true,
  });
  const peak = peakRssMb(bridge.child.pid);
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});
