/**
 * The real clock of the timing rules: its timers fire after their delay and
 * not when cleared, `now` advances with them, and a timer that no longer
 * keeps the process alive (unref, then ref) still fires.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { REAL_CLOCK } from "../lib/clock.ts";

const fired = (ms: number, unref = false): Promise<number> =>
  new Promise((resolve) => {
    const start = REAL_CLOCK.now();
    const id = REAL_CLOCK.setTimeout(() => resolve(REAL_CLOCK.now() - start), ms);
    if (unref) {
      REAL_CLOCK.unrefTimer(id);
      REAL_CLOCK.refTimer(id);
    }
  });

Deno.test("real clock: a timer fires after its delay, and now advances by at least the delay", async () => {
  const elapsed = await fired(30);
  ok(elapsed >= 29, `fired after ${elapsed} ms`);
});

Deno.test("real clock: a cleared timer never fires; clearing undefined is no error", async () => {
  const calls: string[] = [];
  const id = REAL_CLOCK.setTimeout(() => calls.push("cleared"), 10);
  REAL_CLOCK.clearTimeout(id);
  REAL_CLOCK.clearTimeout(undefined);
  await fired(40);
  deepStrictEqual(calls, []);
});

Deno.test("real clock: a timer unref'd and ref'd again still fires", async () => {
  ok((await fired(10, true)) >= 9);
});
