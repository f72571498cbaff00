/** Waits that an abort ends: nothing stays behind on the long-lived signal. */

import { strictEqual } from "node:assert/strict";
import { abortableDelay, untilAborted } from "../../lib/jsonrpc/abortable.ts";
import { readChunks } from "../../lib/jsonrpc/byte_io.ts";

const heapMb = () => Deno.memoryUsage().heapUsed / 1048576;

Deno.test("untilAborted: the value, the error of a rejection, the fallback on an abort", async () => {
  const stop = new AbortController();
  strictEqual(await untilAborted(Promise.resolve(1), stop.signal, "f"), 1);
  const failure = new Error("read failed");
  strictEqual(
    await untilAborted(Promise.reject(failure), stop.signal, "f").catch((e) => e),
    failure,
  );
  const pending = untilAborted(new Promise<number>(() => {}), stop.signal, "f");
  stop.abort();
  strictEqual(await pending, "f");
  strictEqual(await untilAborted(Promise.resolve(2), stop.signal, "f"), "f");
});

Deno.test("a million waits on one signal leave nothing behind (Promise.race kept ~300 bytes each)", async () => {
  const stop = new AbortController();
  const before = heapMb();
  for (let i = 0; i < 1_000_000; i++) await untilAborted(Promise.resolve(i), stop.signal, -1);
  const growth = heapMb() - before;
  strictEqual(growth < 60, true, `the heap grew by ${growth.toFixed(0)} MB`);
});

Deno.test("a million reads of a plain reader leave nothing behind on the source", async () => {
  let left = 1_000_000;
  const source = readChunks({
    read: (buffer) => {
      if (left-- === 0) return Promise.resolve(null);
      buffer[0] = 1;
      return Promise.resolve(1);
    },
  });
  const before = heapMb();
  let n = 0;
  while (await source.next()) n++;
  const growth = heapMb() - before;
  strictEqual(n, 1_000_000);
  strictEqual(growth < 60, true, `the heap grew by ${growth.toFixed(0)} MB`);
});

Deno.test("a failed read fails the reader, as a stream's error did: not a silent end of the input", async () => {
  const source = readChunks({ read: () => Promise.reject(new Error("EIO")) });
  const error = await source.next().catch((e) => e);
  strictEqual(error instanceof Error && error.message, "EIO");
});

/** A signal that counts the abort listeners it holds. */
function countedSignal(controller: AbortController): { signal: AbortSignal; held: () => number } {
  const signal = controller.signal;
  let held = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    held++;
    add(...args);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    held--;
    remove(...args);
  }) as typeof signal.removeEventListener;
  return { signal, held: () => held };
}

Deno.test("abortableDelay: resolves after its time and leaves no listener on the signal", async () => {
  const { signal, held } = countedSignal(new AbortController());
  const start = performance.now();
  await Promise.all([abortableDelay(30, signal), abortableDelay(10, signal)]);
  strictEqual(performance.now() - start >= 29, true, `${performance.now() - start} ms`);
  strictEqual(held(), 0);
});

Deno.test("abortableDelay: an abort rejects with the signal's reason at once, before its time", async () => {
  const stop = new AbortController();
  const start = performance.now();
  const waiting = abortableDelay(60_000, stop.signal).then(() => "resolved", (reason) => reason);
  stop.abort("stopped");
  strictEqual(await waiting, "stopped");
  strictEqual(performance.now() - start < 1_000, true);
  // An aborted signal rejects without waiting.
  strictEqual(await abortableDelay(60_000, stop.signal).catch((reason) => reason), "stopped");
});
