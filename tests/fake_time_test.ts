/** The fake clock of the tests: time moves only with tick, and timers fire in the order of their times. */

import { deepStrictEqual, rejects } from "node:assert/strict";
import { abortableDelay } from "../lib/jsonrpc/abortable.ts";
import { FakeTime } from "./fake_time.ts";

Deno.test("FakeTime: timers fire at their times, in order; a cleared one never fires", async () => {
  const time = new FakeTime(0);
  const fired: string[] = [];
  time.setTimeout(() => fired.push("b"), 20);
  const cleared = time.setTimeout(() => fired.push("cleared"), 5);
  time.setTimeout(() => {
    fired.push(`a@${time.now()}`);
    time.setTimeout(() => fired.push(`c@${time.now()}`), 15);
  }, 10);
  time.clearTimeout(cleared);
  deepStrictEqual(time.pending, [10, 20]);
  await time.tick(19);
  deepStrictEqual([fired, time.now()], [["a@10"], 19]);
  await time.next();
  deepStrictEqual([fired, time.now()], [["a@10", "b"], 20]);
  await time.tick(100);
  deepStrictEqual(fired, ["a@10", "b", "c@25"]);
  await rejects(time.next(), /no timer is armed/);
});

Deno.test("FakeTime: unref'd timers do not count as held; sleep on it resolves with tick and rejects at an abort", async () => {
  const time = new FakeTime();
  const id = time.setTimeout(() => {}, 1000);
  time.unrefTimer(id);
  deepStrictEqual(time.held, 0);
  time.refTimer(id);
  deepStrictEqual(time.held, 1);
  time.clearTimeout(id);
  let slept = false;
  const waiting = abortableDelay(100, new AbortController().signal, time).then(() => slept = true);
  await time.tick(99);
  deepStrictEqual(slept, false);
  await time.tick(1);
  await waiting;
  deepStrictEqual(slept, true);
  const stop = new AbortController();
  const aborted = abortableDelay(100, stop.signal, time);
  stop.abort(new Error("stopped"));
  await rejects(aborted, /stopped/);
  deepStrictEqual(time.pending, []);
});
