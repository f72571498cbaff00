import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Backoff, streamFilter } from "../../lib/bridge/notify.ts";
import { Frontend } from "../../lib/bridge/frontend.ts";
import { DEFAULT_LIMITS, type Limits } from "../../lib/bridge/limits.ts";
import { createLogger } from "../../lib/bridge/log.ts";
import { spawnStdioLink } from "../../lib/upstream/stdio.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter, RAW_SERVER } from "../process/helpers.ts";

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

function start(limits: Partial<Limits>) {
  const all = { ...DEFAULT_LIMITS, ...limits };
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const [command, ...args] = RAW_SERVER("listen");
  const logs: string[] = [];
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: all,
    log: createLogger("t", "debug", (line) => logs.push(line)),
    fallback: { name: "t", version: "0" },
    connect: () =>
      spawnStdioLink({
        command: command!,
        args,
        maxLineBytes: all.max_line_bytes,
        stopGraceMs: 500,
      }),
    output: output.writable,
  });
  const exit = frontend.run(input.readable);
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    [Symbol.asyncIterator]();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const next = async (): Promise<Obj> => JSON.parse((await lines.next()).value);
  const untilId = async (id: unknown) => {
    const out: Obj[] = [];
    for (;;) {
      const msg = await next();
      out.push(msg);
      if (msg.id === id && !("method" in msg)) return out;
    }
  };
  return {
    logs,
    send,
    next,
    untilId,
    async init(): Promise<void> {
      await send({
        jsonrpc: "2.0",
        id: "i",
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      });
      await untilId("i");
    },
    async call(id: string, name: string, args: Obj = {}): Promise<Obj[]> {
      await send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
      return await untilId(id);
    },
    async close(): Promise<number> {
      await writer.close();
      return await exit;
    },
  };
}

Deno.test("lost streams: at most 3 new streams after losses, then none until a change", async () => {
  const t = start({ listen_backoff_ms: 20, listen_max_backoff_ms: 40 });
  await t.init();
  await t.call("n", "next_listen", { what: "end", count: 10 });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await new Promise((r) => setTimeout(r, 500));
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  strictEqual(((state.structuredContent as Obj).filters as unknown[]).length, 4);
  strictEqual(t.logs.some((l) => l.includes("ended 4 times in a row; waiting for a change")), true);
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
  const t = start({ listen_backoff_ms: 20, listen_ack_timeout_ms: 100 });
  await t.init();
  await t.call("n", "next_listen", { what: "silent" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The second stream acknowledges: one event per declared list.
  deepStrictEqual((await t.next()).method, "notifications/tools/list_changed");
  deepStrictEqual((await t.next()).method, "notifications/prompts/list_changed");
  const state = (await t.call("l", "listens")).at(-1)!.result as Obj;
  const s = state.structuredContent as Obj;
  deepStrictEqual([(s.filters as unknown[]).length, (s.cancelled as unknown[]).length], [2, 1]);
  strictEqual(t.logs.some((l) => l.includes("no acknowledgment in 100 ms")), true);
  strictEqual(await t.close(), 0);
});
