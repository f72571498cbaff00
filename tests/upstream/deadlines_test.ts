/** One timer for the time limits of the requests in flight. */

import { deepStrictEqual } from "node:assert/strict";
import { Deadlines } from "../../lib/upstream/deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("deadlines fire in the order of their times, across limits; canceled ones never fire", async () => {
  const deadlines = new Deadlines();
  const fired: string[] = [];
  deadlines.add(60, () => fired.push("60a"));
  const canceled = deadlines.add(20, () => fired.push("20-canceled"));
  deadlines.add(20, () => fired.push("20"));
  deadlines.add(40, () => fired.push("40"));
  deadlines.cancel(canceled);
  deadlines.cancel(canceled); // twice is harmless
  await sleep(120);
  deepStrictEqual(fired, ["20", "40", "60a"]);
});

Deno.test("a shorter limit added later fires first", async () => {
  const deadlines = new Deadlines();
  const fired: string[] = [];
  deadlines.add(80, () => fired.push("long"));
  deadlines.add(10, () => fired.push("short"));
  await sleep(40);
  deepStrictEqual(fired, ["short"]);
  await sleep(80);
  deepStrictEqual(fired, ["short", "long"]);
});

Deno.test("the last cancel stops the timer: no timer outlives the requests", () => {
  // Deno's test sanitizer fails this test if a timer is left behind.
  const deadlines = new Deadlines();
  const a = deadlines.add(3_600_000, () => {});
  const b = deadlines.add(120_000, () => {});
  deadlines.cancel(a);
  deadlines.cancel(b);
});
