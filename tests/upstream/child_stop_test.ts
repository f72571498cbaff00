/**
 * The stop of a child and of its process group, with real processes (`sh`,
 * `sleep`): what the child started stops with it.
 */

import { strictEqual } from "node:assert/strict";
import { OWN_PROCESS_GROUP, stopChild } from "../../lib/upstream/child_stop.ts";
import { within } from "../wait.ts";

/** True while the process runs: not gone, not a zombie (`ps`: Deno reads /proc of another process only with all permissions). */
async function isRunning(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return out.success && state !== "" && !state.startsWith("Z");
}

Deno.test({
  name:
    "stopChild: a process of the group that ignores SIGTERM gets SIGKILL, although the child stopped at SIGTERM",
  ignore: !OWN_PROCESS_GROUP,
  async fn() {
    // The shell waits for a sleep that ignores SIGTERM (an ignored signal stays ignored across exec).
    const child = new Deno.Command("sh", {
      args: ["-c", `(trap '' TERM; exec sleep 30) & echo $!; wait`],
      stdin: "piped",
      stdout: "piped",
      detached: true,
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
    const pid = Number((await lines.next()).value);
    await lines.return?.();
    try {
      strictEqual(await isRunning(pid), true);
      const started = Date.now();
      await within(
        stopChild({ child, stdinClosed: child.stdin.close(), graceMs: 200, group: true }),
        5000,
        "the stop",
      );
      // stdin (200 ms: the shell does not read it), SIGTERM (the shell stops, the sleep does not:
      // 200 ms), SIGKILL to the group.
      strictEqual(Date.now() - started >= 350, true);
      strictEqual((await child.status).signal, "SIGTERM");
      strictEqual(await isRunning(pid), false, "the sleep of the group still runs");
    } finally {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // stopped
      }
    }
  },
});
