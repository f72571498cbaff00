/**
 * The jobs of one connection: a job's error goes to its handler, never to
 * the caller; the shutdown waits for every job (and `also`) for at most the
 * grace, and its timer never outlives the wait (the test sanitizer finds a
 * leaked timer).
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { PromiseGroup } from "../../lib/frontend/promise_group.ts";

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

Deno.test("promise group: a job that throws goes to its onError, once; run never rejects", async () => {
  const group = new PromiseGroup();
  const errors: unknown[] = [];
  const boom = new Error("boom");
  group.run(() => Promise.reject(boom), (error) => errors.push(error));
  group.run(async () => {
    await delay(5);
    throw boom;
  }, (error) => errors.push(error));
  await group.settled(1000);
  deepStrictEqual(errors, [boom, boom]);
});

Deno.test("promise group: settled waits for every job and for also, then returns before the grace", async () => {
  const group = new PromiseGroup();
  const done: string[] = [];
  group.run(async () => {
    await delay(20);
    done.push("a");
  }, () => {});
  group.run(async () => {
    await delay(40);
    done.push("b");
  }, () => {});
  const also = delay(60).then(() => void done.push("also"));
  const start = performance.now();
  // A grace of 10 s: the timer must be cleared when the jobs end, or the sanitizer fails.
  await group.settled(10_000, also);
  const elapsed = performance.now() - start;
  deepStrictEqual(done, ["a", "b", "also"]);
  ok(elapsed < 5000, `settled took ${elapsed} ms`);
});

Deno.test("promise group: a job that never ends is left after the grace", async () => {
  const group = new PromiseGroup();
  let finished = false;
  group.run(() => new Promise(() => {}), () => {});
  group.run(async () => {
    await delay(5);
    finished = true;
  }, () => {});
  const start = performance.now();
  await group.settled(50);
  const elapsed = performance.now() - start;
  ok(finished);
  ok(elapsed >= 45 && elapsed < 5000, `settled took ${elapsed} ms`);
});
