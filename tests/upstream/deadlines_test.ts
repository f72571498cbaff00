/** One timer for the time limits of the requests in flight. */

import { deepStrictEqual } from "node:assert/strict";
import { Deadlines } from "../../lib/upstream/deadlines.ts";
import { FakeTime } from "../fake_time.ts";

Deno.test("deadlines fire in the order of their times, across limits; canceled ones never fire", async () => {
  const time = new FakeTime();
  const deadlines = new Deadlines({ clock: time });
  const fired: string[] = [];
  deadlines.add(60, () => fired.push("60a"));
  const canceled = deadlines.add(20, () => fired.push("20-canceled"));
  deadlines.add(20, () => fired.push("20"));
  deadlines.add(40, () => fired.push("40"));
  deadlines.cancel(canceled);
  deadlines.cancel(canceled); // twice is harmless
  await time.tick(59);
  deepStrictEqual(fired, ["20", "40"]);
  await time.tick(1);
  deepStrictEqual(fired, ["20", "40", "60a"]);
  deepStrictEqual([deadlines.size, deadlines.timer], [0, "none"]);
});

Deno.test("a shorter limit added later fires first", async () => {
  const time = new FakeTime();
  const deadlines = new Deadlines({ clock: time });
  const fired: string[] = [];
  deadlines.add(80, () => fired.push("long"));
  deadlines.add(10, () => fired.push("short"));
  await time.tick(10);
  deepStrictEqual(fired, ["short"]);
  await time.tick(69);
  deepStrictEqual(fired, ["short"]);
  await time.tick(1);
  deepStrictEqual(fired, ["short", "long"]);
});

Deno.test("after the last cancel the timer no longer holds the process, and the next request reuses it", async () => {
  const time = new FakeTime();
  const deadlines = new Deadlines({ clock: time });
  const a = deadlines.add(3_600_000, () => {});
  const b = deadlines.add(120_000, () => {});
  deepStrictEqual(deadlines.timer, "held");
  deadlines.cancel(a);
  deadlines.cancel(b);
  deepStrictEqual([deadlines.size, deadlines.timer], [0, "idle"]);
  deepStrictEqual([time.pending, time.held], [[120_000], 0]);
  // A deadline after the armed one holds the process again with the same timer.
  const again = deadlines.add(3_600_000, () => {});
  deepStrictEqual(deadlines.timer, "held");
  deepStrictEqual([time.pending, time.held], [[120_000], 1]);
  deadlines.cancel(again);
  deepStrictEqual(deadlines.timer, "idle");
  // An earlier deadline re-arms, and it fires on time.
  const fired: string[] = [];
  deadlines.add(30, () => fired.push("late"));
  deepStrictEqual(deadlines.timer, "held");
  await time.tick(29);
  deepStrictEqual(fired, []);
  await time.tick(1);
  deepStrictEqual(fired, ["late"]);
  deepStrictEqual(deadlines.timer, "none");
  deadlines.cancel(deadlines.add(3_600_000, () => {}));
  deepStrictEqual([deadlines.timer, time.held], ["idle", 0]);
  deadlines.close();
  deepStrictEqual([deadlines.timer, time.pending], ["none", []]);
});

Deno.test("with the real clock, a deadline fires on time and the timer ends", async () => {
  const deadlines = new Deadlines();
  const fired = await new Promise<string>((resolve) => deadlines.add(5, () => resolve("fired")));
  deepStrictEqual([fired, deadlines.size, deadlines.timer], ["fired", 0, "none"]);
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
