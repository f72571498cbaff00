/**
 * The stop of the upstream child and of what it started: its stdin closes,
 * then SIGTERM, then SIGKILL, each after a grace. On Linux and macOS the
 * child starts in a session of its own ({@linkcode OWN_PROCESS_GROUP}: Deno's
 * `detached` calls setsid), so its process group holds the processes that it
 * started, and each signal goes to the whole group: a server behind
 * `sh -c "server; true"` that ignores the end of its stdin stops with its
 * shell. On Windows, Deno has no process group to signal: only the child
 * gets the signal (TerminateProcess).
 *
 * @module
 */

/** True where the child gets a process group of its own (Linux, macOS). */
export const OWN_PROCESS_GROUP: boolean = Deno.build.os !== "windows";

/** How often the stop looks whether a process of the group still runs. */
const GROUP_POLL_MS = 20;

/** True when the promise settles within `ms`; the timer never outlives the race. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What {@linkcode stopChild} stops. */
export interface ChildStop {
  readonly child: Deno.ChildProcess;
  /** The close of the child's stdin (the writer's last bytes first). */
  readonly stdinClosed: Promise<void>;
  /** The time after the close of stdin, and again after SIGTERM. */
  readonly graceMs: number;
  /** The child leads a process group of its own ({@linkcode OWN_PROCESS_GROUP}). */
  readonly group: boolean;
}

/**
 * Stops the child and its group: the close of stdin, `graceMs` later SIGTERM
 * to the group, `graceMs` later SIGKILL. Each step ends early once the child
 * has stopped and no process of its group is left.
 *
 * @example
 * ```ts
 * import { OWN_PROCESS_GROUP, stopChild } from "./child_stop.ts";
 * // `cat` stops at the end of its stdin: no signal.
 * const child = new Deno.Command("cat", { stdin: "piped", detached: OWN_PROCESS_GROUP }).spawn();
 * await stopChild({ child, stdinClosed: child.stdin.close(), graceMs: 1000, group: OWN_PROCESS_GROUP });
 * if ((await child.status).signal !== null) throw new Error("it needed a signal");
 * ```
 */
export async function stopChild(stop: ChildStop): Promise<void> {
  const { child, graceMs } = stop;
  const started = Date.now();
  // A child that does not read its stdin never takes the last write: the
  // close of stdin has the same deadline as each later step.
  await settlesWithin(stop.stdinClosed, graceMs);
  if (await gone(stop, graceMs - (Date.now() - started))) return;
  signal(stop, "SIGTERM");
  if (await gone(stop, graceMs)) return;
  signal(stop, "SIGKILL");
  await child.status;
}

/** True once the child stopped and its group is empty, within `ms`. */
async function gone(stop: ChildStop, ms: number): Promise<boolean> {
  const deadline = Date.now() + Math.max(0, ms);
  if (!(await settlesWithin(stop.child.status, Math.max(0, ms)))) return false;
  for (;;) {
    if (!groupRuns(stop)) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await delay(Math.min(GROUP_POLL_MS, left));
  }
}

/**
 * True while a process of the child's group runs. SIGCONT is the probe: it
 * changes nothing for a process that runs, and `kill` fails when the group
 * is empty. The group's id stays taken while a process is in it, so the
 * probe and the signals reach no other group.
 */
function groupRuns(stop: ChildStop): boolean {
  if (!stop.group) return false;
  try {
    Deno.kill(-stop.child.pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/** Sends `name` to the child's group, or to the child alone (no group, or it is empty). */
function signal(stop: ChildStop, name: Deno.Signal): void {
  if (stop.group) {
    try {
      Deno.kill(-stop.child.pid, name);
      return;
    } catch {
      // The group is empty.
    }
  }
  try {
    stop.child.kill(name);
  } catch {
    // It stopped in the meantime.
  }
}
