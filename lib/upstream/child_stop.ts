/**
 * The stop of the upstream child and of what it started: its stdin closes,
 * then SIGTERM, then SIGKILL, each after a grace. The signals also go to
 * the processes that the child started (its tree, as `ps` shows it when the
 * signals start), so a server behind `sh -c "server; true"` that ignores the
 * end of its stdin stops with its shell.
 *
 * Why not a process group of its own: Deno's `detached` makes the child the
 * leader of a new session (setsid), and on Linux a session is a scheduling
 * group of its own (autogroup): the bridge and its upstream then take turns
 * on a busy machine as two strangers, and a small call costs 30 to 50% more
 * wall time. The tree is read only when a child does not stop at the end of
 * its stdin. Without `ps` (or on Windows), only the child gets the signals.
 *
 * @module
 */

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

/** How often the stop looks whether a process of the tree still runs. */
const TREE_POLL_MS = 50;

/** What {@linkcode stopChild} stops. */
export interface ChildStop {
  readonly child: Deno.ChildProcess;
  /** The close of the child's stdin (the writer's last bytes first). */
  readonly stdinClosed: Promise<void>;
  /** The time after the close of stdin, and again after SIGTERM. */
  readonly graceMs: number;
  /** The table of processes (by default from `ps`); tests pass their own. */
  readonly processes?: () => Promise<ProcessTable | undefined>;
}

/** One process that runs: its parent, and its start time (with its id, who it is). */
export interface ProcessRow {
  readonly ppid: number;
  readonly start: string;
  readonly zombie: boolean;
}

/** The processes that run, by id. */
export type ProcessTable = ReadonlyMap<number, ProcessRow>;

/** A process of the child's tree: its id and its start time (the id alone can be used again). */
export interface Member {
  readonly pid: number;
  readonly start: string;
}

/**
 * Stops the child and its tree: the close of stdin, `graceMs` later SIGTERM
 * to the child and to the processes that it started, `graceMs` later SIGKILL
 * to those that still run. Each step ends early once the child has stopped
 * and no process of its tree is left.
 *
 * @example
 * ```ts
 * import { stopChild } from "./child_stop.ts";
 * // `cat` stops at the end of its stdin: no signal.
 * const child = new Deno.Command("cat", { stdin: "piped" }).spawn();
 * await stopChild({ child, stdinClosed: child.stdin.close(), graceMs: 1000 });
 * if ((await child.status).signal !== null) throw new Error("it needed a signal");
 * ```
 */
export async function stopChild(stop: ChildStop): Promise<void> {
  const { child, graceMs } = stop;
  const processes = stop.processes ?? psTable;
  const started = Date.now();
  // A child that does not read its stdin never takes the last write: the
  // close of stdin has the same deadline as each later step.
  await settlesWithin(stop.stdinClosed, graceMs);
  if (await settlesWithin(child.status, Math.max(0, graceMs - (Date.now() - started)))) return;
  // The tree while the child runs: once it stops, what it started has another parent.
  const tree = treeOf(child.pid, await processes());
  signal(child, tree, "SIGTERM");
  if (await gone(stop, tree, processes)) return;
  signal(child, running(tree, await processes()), "SIGKILL");
  await child.status;
}

/** True once the child stopped and no process of `tree` runs, within the grace. */
async function gone(
  stop: ChildStop,
  tree: readonly Member[],
  processes: () => Promise<ProcessTable | undefined>,
): Promise<boolean> {
  const deadline = Date.now() + stop.graceMs;
  if (!(await settlesWithin(stop.child.status, stop.graceMs))) return false;
  for (;;) {
    if (running(tree, await processes()).length === 0) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await delay(Math.min(TREE_POLL_MS, left));
  }
}

/** Sends `name` to the child and to each member (each one that is gone is skipped). */
function signal(child: Deno.ChildProcess, members: readonly Member[], name: Deno.Signal): void {
  try {
    child.kill(name);
  } catch {
    // It stopped in the meantime.
  }
  for (const { pid } of members) {
    try {
      Deno.kill(pid, name);
    } catch {
      // It stopped in the meantime.
    }
  }
}

/**
 * The processes below `root` in `table` (not `root` itself). Without a
 * table, none.
 *
 * @example
 * ```ts
 * import { treeOf } from "./child_stop.ts";
 * const row = (ppid: number) => ({ ppid, start: "t", zombie: false });
 * const table = new Map([[10, row(1)], [11, row(10)], [12, row(11)], [13, row(1)]]);
 * const pids = treeOf(10, table).map((member) => member.pid);
 * if (pids.join() !== "11,12") throw new Error(pids.join());
 * ```
 */
export function treeOf(root: number, table: ProcessTable | undefined): Member[] {
  if (!table) return [];
  const children = new Map<number, number[]>();
  for (const [pid, row] of table) {
    const list = children.get(row.ppid);
    if (list) list.push(pid);
    else children.set(row.ppid, [pid]);
  }
  const members: Member[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    const row = table.get(pid)!;
    if (!row.zombie) members.push({ pid, start: row.start });
    queue.push(...(children.get(pid) ?? []));
  }
  return members;
}

/**
 * The members that still run: the same id with the same start time, not a
 * zombie. A process that has the id of a gone member is another one, and
 * gets no signal. Without a table, none.
 */
function running(members: readonly Member[], table: ProcessTable | undefined): Member[] {
  if (!table) return [];
  return members.filter(({ pid, start }) => {
    const row = table.get(pid);
    return row !== undefined && !row.zombie && row.start === start;
  });
}

/**
 * The processes of the host, from `ps` (POSIX: Linux and macOS): id, parent,
 * state and start time. Undefined where `ps` cannot run (Windows, a
 * container without procps): only the child gets the signals then.
 */
async function psTable(): Promise<ProcessTable | undefined> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("ps", {
      args: ["-A", "-o", "pid=,ppid=,stat=,lstart="],
      env: { LC_ALL: "C" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
  } catch {
    return undefined;
  }
  if (!out.success) return undefined;
  return parsePs(new TextDecoder().decode(out.stdout));
}

/**
 * The table of `ps -o pid=,ppid=,stat=,lstart=`: the start is the rest of
 * the line (a date with spaces).
 *
 * @example
 * ```ts
 * import { parsePs } from "./child_stop.ts";
 * const table = parsePs("  10     1 Ss   Sun Dec  6 07:16:47 2026\n  11    10 Z    Sun Dec  6 07:16:48 2026\n");
 * if (table.get(11)?.ppid !== 10 || !table.get(11)?.zombie) throw new Error();
 * if (table.get(10)?.start !== "Sun Dec 6 07:16:47 2026") throw new Error();
 * ```
 */
export function parsePs(text: string): ProcessTable {
  const table = new Map<number, ProcessRow>();
  for (const line of text.split("\n")) {
    const [pid, ppid, stat, ...start] = line.trim().split(/\s+/);
    if (!pid || !ppid || !stat || start.length === 0) continue;
    const [id, parent] = [Number(pid), Number(ppid)];
    if (!Number.isInteger(id) || !Number.isInteger(parent)) continue;
    table.set(id, { ppid: parent, start: start.join(" "), zombie: stat.startsWith("Z") });
  }
  return table;
}
