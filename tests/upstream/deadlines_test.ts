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

Deno.test("after the last cancel the timer no longer holds the process, and the next request reuses it", async () => {
  const deadlines = new Deadlines();
  const a = deadlines.add(3_600_000, () => {});
  const b = deadlines.add(120_000, () => {});
  deepStrictEqual(deadlines.timer, "held");
  deadlines.cancel(a);
  deadlines.cancel(b);
  deepStrictEqual([deadlines.size, deadlines.timer], [0, "idle"]);
  // A deadline after the armed one holds the process again with the same timer.
  const again = deadlines.add(3_600_000, () => {});
  deepStrictEqual(deadlines.timer, "held");
  deadlines.cancel(again);
  deepStrictEqual(deadlines.timer, "idle");
  // An earlier deadline re-arms, and it fires on time.
  const fired: string[] = [];
  deadlines.add(30, () => fired.push("late"));
  deepStrictEqual(deadlines.timer, "held");
  await sleep(60);
  deepStrictEqual(fired, ["late"]);
  deepStrictEqual(deadlines.timer, "none");
  // Deno's test sanitizer fails this test if a held timer is left behind.
  deadlines.cancel(deadlines.add(3_600_000, () => {}));
  deepStrictEqual(deadlines.timer, "idle");
  deadlines.close();
  deepStrictEqual(deadlines.timer, "none");
});

Deno.test("an idle timer does not keep a process alive", async () => {
  const script = `import { Deadlines } from ${
    JSON.stringify(new URL("../../lib/upstream/deadlines.ts", import.meta.url).href)
  };
const d = new Deadlines(); d.cancel(d.add(3_600_000, () => {}));`;
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", script],
    stdout: "null",
    stderr: "inherit",
    signal: AbortSignal.timeout(20_000), // a held timer would keep it for an hour
  }).output();
  deepStrictEqual(code, 0);
});
