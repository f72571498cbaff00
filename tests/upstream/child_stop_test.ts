/**
 * The stop of a child and of the processes that it started, with real
 * processes (`sh`, `sleep`, `ps`), and with tables of processes that the
 * test writes (a recycled id).
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type ProcessTable, stopChild, treeOf } from "../../lib/upstream/child_stop.ts";
import { within } from "../wait.ts";

const posix = Deno.build.os !== "windows";

/** True while the process runs: not gone, not a zombie (`ps`: Deno reads /proc of another process only with all permissions). */
async function isRunning(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return out.success && state !== "" && !state.startsWith("Z");
}

/** A shell that waits for `inner` in the background and writes its pid first. */
async function shellWith(inner: string): Promise<{ child: Deno.ChildProcess; pid: number }> {
  const child = new Deno.Command("sh", {
    args: ["-c", `(${inner}) & echo $!; wait`],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
  const pid = Number((await lines.next()).value);
  await lines.return?.();
  return { child, pid };
}

Deno.test({
  name:
    "stopChild: a process that the child started and that ignores SIGTERM gets SIGKILL, although the child stopped at SIGTERM",
  ignore: !posix,
  async fn() {
    // An ignored signal stays ignored across exec.
    const { child, pid } = await shellWith("trap '' TERM; exec sleep 30");
    try {
      strictEqual(await isRunning(pid), true);
      const started = Date.now();
      await within(
        stopChild({ child, stdinClosed: child.stdin.close(), graceMs: 200 }),
        5000,
        "the stop",
      );
      // stdin (200 ms: the shell does not read it), SIGTERM (the shell stops, the sleep
      // does not: 200 ms), SIGKILL.
      strictEqual(Date.now() - started >= 350, true);
      strictEqual((await child.status).signal, "SIGTERM");
      strictEqual(await isRunning(pid), false, "the sleep that the shell started still runs");
    } finally {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // stopped
      }
    }
  },
});

Deno.test({
  name:
    "stopChild: a process that has the id of a gone one of the tree (another start) gets no SIGKILL",
  ignore: !posix,
  async fn() {
    const { child } = await shellWith("exec sleep 30");
    // Not of the tree: it ignores SIGTERM, and only a SIGKILL could stop it.
    const stranger = new Deno.Command("sh", {
      args: ["-c", "trap '' TERM; exec sleep 30"],
      stdin: "null",
    }).spawn();
    // The tables of the stop: the stranger's id is in the tree at SIGTERM, then it is
    // another process (another start time), as an id used again would be.
    let reads = 0;
    const table = (): ProcessTable =>
      new Map([[stranger.pid, {
        ppid: child.pid,
        start: reads++ === 0 ? "the first one" : "another one",
        zombie: false,
      }]]);
    try {
      await within(
        stopChild({
          child,
          stdinClosed: child.stdin.close(),
          graceMs: 100,
          processes: () => Promise.resolve(table()),
        }),
        5000,
        "the stop",
      );
      strictEqual(reads >= 2, true);
      strictEqual(await isRunning(stranger.pid), true, "a process that is not of the tree stopped");
    } finally {
      stranger.kill("SIGKILL");
      await stranger.status;
    }
  },
});

Deno.test("treeOf: every process below the root, zombies left out", () => {
  const row = (ppid: number, zombie = false) => ({ ppid, start: `s${ppid}`, zombie });
  const table = new Map([
    [10, row(1)],
    [11, row(10)],
    [12, row(11)],
    [13, row(11, true)],
    [14, row(1)],
  ]);
  deepStrictEqual(treeOf(10, table).map((member) => member.pid), [11, 12]);
  deepStrictEqual(treeOf(10, undefined), []);
});
