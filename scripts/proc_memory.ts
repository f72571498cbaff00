/**
 * The memory of a running process, read from /proc (Linux) through `cat`:
 * Deno asks for all permissions to read /proc directly, and the benchmarks
 * and tests run with the `test` set, where `cat` needs only `run`.
 *
 * @module
 */

const dec = new TextDecoder();

/** The text of `/proc/<pid>/<file>`; empty when the process ended or there is no /proc. */
async function procFile(pid: number, file: string): Promise<string> {
  try {
    const result = await new Deno.Command("cat", {
      args: [`/proc/${pid}/${file}`],
      stdout: "piped",
      stderr: "null",
    }).output();
    return dec.decode(result.stdout);
  } catch {
    return "";
  }
}

/** The resident set (VmRSS) of `pid` now, in KiB; undefined when it cannot be read. */
export async function rssKib(pid: number): Promise<number | undefined> {
  const kib = Number(/VmRSS:\s+(\d+)/.exec(await procFile(pid, "status"))?.[1]);
  return Number.isFinite(kib) ? kib : undefined;
}

/**
 * The memory of `pid` now, in KiB: its resident set, and the part of it that
 * is its own (private pages: the heap, the modules' code and data). The rest
 * is shared, mostly the pages of the Deno binary that every bridge maps: ten
 * bridges pay it once.
 */
export async function memoryOf(pid: number): Promise<{ rss: number; own?: number } | undefined> {
  const rss = await rssKib(pid);
  if (rss === undefined) return undefined;
  const rollup = await procFile(pid, "smaps_rollup");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(rollup)?.[1]);
  const own = field("Private_Clean") + field("Private_Dirty");
  return Number.isFinite(own) ? { rss, own } : { rss };
}
