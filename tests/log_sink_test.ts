import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { LogSink } from "../lib/log_sink.ts";
import { within } from "./wait.ts";

/** A stderr that takes nothing until `open`, then everything; and what it got. */
function stalledOutput() {
  const chunks: string[] = [];
  const opened = Promise.withResolvers<void>();
  let writes = 0;
  return {
    chunks,
    get writes() {
      return writes;
    },
    open: () => opened.resolve(),
    output: {
      write: async (bytes: Uint8Array) => {
        writes++;
        await opened.promise;
        chunks.push(new TextDecoder().decode(bytes));
        return bytes.length;
      },
    },
  };
}

Deno.test("log sink: a stderr that is not read never blocks; the lines above the bound are dropped, counted and reported once it takes lines again", async () => {
  const out = stalledOutput();
  const sink = new LogSink(out.output, { maxBytes: 100 });
  const line = (n: number) => `[p] info: line ${String(n).padStart(2, "0")}\n`; // 18 bytes
  // Written in one task: nothing waits for stderr.
  for (let n = 0; n < 10; n++) sink.write(line(n));
  strictEqual(out.writes, 1, "one write waits; the rest queue");
  // The write of line 0 waits; lines 1 to 5 take 90 of the 100 bytes; 6 to 9 are dropped.
  strictEqual(await sink.flush(20), false);
  out.open();
  ok(await sink.flush(1000));
  sink.write(line(10));
  ok(await sink.flush(1000));
  deepStrictEqual(out.chunks.join("").split("\n").filter(Boolean), [
    "[p] info: line 00",
    "[p] info: line 01",
    "[p] info: line 02",
    "[p] info: line 03",
    "[p] info: line 04",
    "[p] info: line 05",
    "[p] warn: 4 log lines were dropped: stderr was full",
    "[p] info: line 10",
  ]);
});

Deno.test("log sink: the lines go out whole, batched up to 4096 bytes; a longer line alone", async () => {
  const out = stalledOutput();
  const sink = new LogSink(out.output);
  const short = "[p] debug: " + "s".repeat(88) + "\n"; // 100 bytes
  const long = "[p] debug: " + "l".repeat(5000) + "\n";
  sink.write("[p] info: first\n");
  for (let i = 0; i < 100; i++) sink.write(short);
  sink.write(long);
  sink.write(short);
  out.open();
  ok(await sink.flush(1000));
  for (const chunk of out.chunks) ok(chunk.endsWith("\n"), "a chunk of whole lines");
  deepStrictEqual(out.chunks.map((chunk) => chunk.length), [16, 4000, 4000, 2000, 5012, 100]);
  strictEqual(out.chunks.join(""), "[p] info: first\n" + short.repeat(100) + long + short);
});

Deno.test("log sink: a closed stderr is no error, and the later lines go nowhere", async () => {
  let writes = 0;
  const sink = new LogSink({
    write: () => {
      writes++;
      return Promise.reject(new Deno.errors.BadResource("closed"));
    },
  });
  sink.write("[p] error: a\n");
  sink.write("[p] error: b\n");
  ok(await within(sink.flush(1000), 2000, "the flush"));
  sink.write("[p] error: c\n");
  ok(await sink.flush(1000));
  strictEqual(writes, 1);
});
