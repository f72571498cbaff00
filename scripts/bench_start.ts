/**
 * What one bridge costs to start and to keep, as the release binary runs it
 * (the bundle of `scripts/bundle.ts`, built here from the current sources,
 * run without a config file with the flags that `deno compile` bakes in),
 * against floors measured in the same run the same way: a one-line script
 * (the floor of `--version` and `--help`: time and peak RSS) and a script
 * that waits on stdin (the idle floor). The figures: `--version` and
 * `--help`; the time until the initialize of a client is answered in front
 * of a stdio upstream, against the upstream alone answering its first
 * request; the idle RSS of a bridge in front of a stdio upstream and of one
 * in front of a URL upstream without sign-in (with the part of each that is
 * the process's own: the rest is the Deno binary's pages, shared by every
 * bridge); and the size of the compiled binary less the Deno binary (with
 * DENORT_BIN set to this Deno), against a compiled one-line script. Prints
 * each figure with its target (issue 38), and, without a target, where the
 * cost goes: how long after its own start the bridge starts the upstream,
 * and the idle memory of a script that starts the upstream and reads its
 * answer. A benchmark, not a test: nothing here fails on a slow machine.
 *
 * Run: `deno task bench:start` (Linux: the peak RSS of a short process is
 * read with GNU time, `/usr/bin/time`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { buildBundle, BUNDLE_ENTRY, bundleRunArgs } from "./bundle.ts";
import { memoryOf } from "./proc_memory.ts";
import { compileArgs, hostTarget, runtimeFlags } from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const enc = new TextEncoder();
const dec = new TextDecoder();
const out = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));

/** Runs of each timed figure (the median is printed). */
const RUNS = 9;
/** How long a bridge stays idle before its RSS is read. */
const IDLE_MS = 1500;

const UPSTREAM = [deno, "run", "-q", "-A", `${root}tests/fixtures/modern_server.ts`];

/** A script run as the bundle runs: no config file, the flags of the compile. */
const script = (path: string) => [deno, "run", "--no-config", "-q", ...runtimeFlags(), path];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const verdict = (ok: boolean) => ok ? "ok" : "over";

/** The wall time of a command that exits, in ms. */
async function wallMs(command: readonly string[]): Promise<number> {
  const start = performance.now();
  const result = await new Deno.Command(command[0]!, {
    args: command.slice(1),
    cwd: root,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  if (!result.success) throw new Error(`${command.join(" ")} failed`);
  return performance.now() - start;
}

/** The peak RSS of a command that exits, in KiB, by GNU time; undefined without it. */
async function peakKib(command: readonly string[]): Promise<number | undefined> {
  try {
    const result = await new Deno.Command("/usr/bin/time", {
      args: ["-f", "%M", ...command],
      cwd: root,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const lines = dec.decode(result.stderr).trim().split("\n");
    const kib = Number(lines.at(-1));
    return result.success && Number.isFinite(kib) ? kib : undefined;
  } catch {
    return undefined;
  }
}

/** Median wall time and median peak RSS of a command that exits. */
async function shortRun(command: readonly string[]): Promise<{ ms: number; kib?: number }> {
  await wallMs(command); // Warm: the caches of Deno are filled.
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await wallMs(command));
  const peaks: number[] = [];
  for (let i = 0; i < 3; i++) {
    const kib = await peakKib(command);
    if (kib !== undefined) peaks.push(kib);
  }
  return { ms: median(times), ...(peaks.length > 0 && { kib: median(peaks) }) };
}

/** A child on pipes that answers lines: the bridge or the upstream alone. */
class LineChild {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: ReadableStreamDefaultReader<string>;

  constructor(command: readonly string[], env: Record<string, string> = {}) {
    this.child = new Deno.Command(command[0]!, {
      args: command.slice(1),
      cwd: root,
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#lines = this.child.stdout
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(splitLines())
      .getReader();
  }

  async send(message: unknown): Promise<void> {
    await this.#writer.write(enc.encode(JSON.stringify(message) + "\n"));
  }

  /** The next line with an `id`. */
  async response(): Promise<Record<string, unknown>> {
    for (;;) {
      const { value, done } = await this.#lines.read();
      if (done) throw new Error("the process ended before it answered");
      const message = JSON.parse(value) as Record<string, unknown>;
      if ("id" in message) return message;
    }
  }

  async stop(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#lines.cancel().catch(() => {});
    await this.child.status;
  }
}

function splitLines(): TransformStream<string, string> {
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf("\n")) !== -1) {
        controller.enqueue(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
      }
    },
  });
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench-start", version: "1" },
  },
};

const DISCOVER = {
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "bench-start", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
};

/** The time from the start of `command` to the answer of `first`. */
async function answeredMs(command: readonly string[], first: unknown): Promise<number> {
  const start = performance.now();
  const child = new LineChild(command);
  try {
    await child.send(first);
    const answer = await child.response();
    if (!("result" in answer)) throw new Error(`no result: ${JSON.stringify(answer)}`);
    return performance.now() - start;
  } finally {
    await child.stop();
  }
}

/**
 * `upstream` behind a shell that first writes the time (ns since the epoch)
 * into `stamp`: when the bridge started it.
 */
const stamped = (stamp: string, upstream: readonly string[]) => [
  "sh",
  "-c",
  'date +%s%N > "$0"; exec "$@"',
  stamp,
  ...upstream,
];

/** The time from the start of the bridge `command` to its start of the upstream (`stamped`). */
async function spawnedMs(command: readonly string[], stamp: string): Promise<number> {
  const start = Date.now();
  const child = new LineChild(command);
  try {
    await child.send(INITIALIZE);
    await child.response();
    return Number(await Deno.readTextFile(stamp)) / 1e6 - start;
  } finally {
    await child.stop();
  }
}

/** The memory of a bridge after initialize, a tools/list and IDLE_MS of nothing, in KiB. */
async function idleKib(command: readonly string[], env: Record<string, string> = {}) {
  const child = new LineChild(command, env);
  try {
    await child.send(INITIALIZE);
    const answer = await child.response();
    if (!("result" in answer)) throw new Error(`no result: ${JSON.stringify(answer)}`);
    await child.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await child.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    await child.response();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return await memoryOf(child.child.pid);
  } finally {
    await child.stop();
  }
}

/** The memory of the floor script that waits, after IDLE_MS: the idle floor of a process. */
async function idleFloor(command: readonly string[]) {
  const child = new LineChild(command);
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS + 500));
    return await memoryOf(child.child.pid);
  } finally {
    child.child.kill();
    await child.stop();
  }
}

/** The medians of three idle readings: the resident set, and the own part when known. */
function idleFigure(readings: ({ rss: number; own?: number } | undefined)[]) {
  const known = readings.filter((r) => r !== undefined);
  if (known.length === 0) return undefined;
  const own = known.flatMap((r) => r.own === undefined ? [] : [r.own]);
  return { rss: median(known.map((r) => r.rss)), ...(own.length > 0 && { own: median(own) }) };
}

/** An HTTP upstream (the SDK v2 fixture) on loopback: its URL, and its stop. */
async function httpUpstream(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(deno, {
    args: ["run", "-q", "-A", `${root}tests/fixtures/http_sdk_server.ts`, "/mcp", "--lean"],
    cwd: root,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
    .getReader();
  const { value } = await reader.read();
  if (value === undefined) throw new Error("the HTTP upstream did not start");
  return {
    url: value.trim(),
    stop: async () => {
      await child.stdin.close();
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}

/**
 * The bytes that `deno compile` adds to the Deno binary for `entry` (with
 * DENORT_BIN set to this Deno), and the "Files:" line of its summary.
 */
async function compiledBytes(
  entry: string,
  args: (output: string) => string[],
): Promise<{ bytes: number; files: string } | undefined> {
  if (hostTarget() === undefined) return undefined;
  const dir = await Deno.makeTempDir();
  try {
    const result = await new Deno.Command(deno, {
      args: args(`${dir}/bridge`),
      cwd: root,
      env: { DENORT_BIN: deno, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const summary = dec.decode(result.stdout) + dec.decode(result.stderr);
    if (!result.success) throw new Error(`deno compile of ${entry} failed: ${summary}`);
    const bytes = (await Deno.stat(`${dir}/bridge`)).size - (await Deno.stat(deno)).size;
    return { bytes, files: /^Files:\s*(.*)$/m.exec(summary)?.[1]?.trim() ?? "?" };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A script that starts `upstream`, sends server/discover, reads the answer, then waits on stdin. */
function spawnAndWait(upstream: readonly string[]): string {
  return `const child = new Deno.Command(${JSON.stringify(upstream[0])}, {
  args: ${JSON.stringify(upstream.slice(1))}, stdin: "piped", stdout: "piped", stderr: "null",
}).spawn();
const writer = child.stdin.getWriter();
await writer.write(new TextEncoder().encode(${JSON.stringify(JSON.stringify(DISCOVER) + "\n")}));
await child.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
const buffer = new Uint8Array(65536);
while ((await Deno.stdin.read(buffer)) !== null);
`;
}

/** `value` against `floor + limit`: the difference and the verdict. */
function against(value: number, floor: number, limit: number, unit: (n: number) => string): string {
  const over = value - floor;
  return `floor ${over < 0 ? "-" : "+"} ${unit(Math.abs(over))} (target <= + ${unit(limit)}: ${
    verdict(over <= limit)
  })`;
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    const bundle = `${dir}/bundle`;
    buildBundle(bundle);
    const bridge = [deno, ...bundleRunArgs(bundle)];
    const oneLine = `${dir}/one_line.js`;
    await Deno.writeTextFile(oneLine, 'console.log("one line");\n');
    const waiting = `${dir}/wait.js`;
    await Deno.writeTextFile(
      waiting,
      "const buffer = new Uint8Array(65536);\nwhile ((await Deno.stdin.read(buffer)) !== null);\n",
    );
    out(`bench:start (Deno ${Deno.version.deno}, ${Deno.build.target}), medians of ${RUNS} runs`);
    out(`  the bundle as the binary runs it: deno ${bundleRunArgs("BUNDLE").join(" ")}`);
    const floor = await shortRun(script(oneLine));
    const kib = (run: { kib?: number }) => run.kib === undefined ? "n/a" : mib(run.kib);
    out(`  floor, a one-line script: ${ms(floor.ms)}, peak ${kib(floor)}`);
    for (const flag of ["--version", "--help"]) {
      const run = await shortRun([...bridge, flag]);
      const peak = run.kib === undefined || floor.kib === undefined
        ? ""
        : `; peak ${kib(run)}, ${against(run.kib * 1024, floor.kib * 1024, 3e6, mb)}`;
      out(`  ${flag}: ${ms(run.ms)}, ${against(run.ms, floor.ms, 25, ms)}${peak}`);
    }
    const alone: number[] = [];
    const bridged: number[] = [];
    await answeredMs(UPSTREAM, DISCOVER);
    for (let i = 0; i < RUNS; i++) {
      alone.push(await answeredMs(UPSTREAM, DISCOVER));
      bridged.push(await answeredMs([...bridge, "--", ...UPSTREAM], INITIALIZE));
    }
    const extra = median(bridged) - median(alone);
    out(
      `  stdio upstream: initialize answered after ${ms(median(bridged))}; the upstream alone ` +
        `answers server/discover after ${ms(median(alone))}: + ${ms(extra)} (target <= + 50 ms: ${
          verdict(extra <= 50)
        })`,
    );
    // Where the extra goes: the bridge starts the upstream only after its own start.
    const stamp = `${dir}/spawned`;
    const spawned: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      spawned.push(await spawnedMs([...bridge, "--", ...stamped(stamp, UPSTREAM)], stamp));
    }
    out(
      `  (the bridge starts the upstream ${ms(median(spawned))} after its own start; ` +
        `a one-line script runs in ${ms(floor.ms)})`,
    );
    const floorIdle = idleFigure([
      await idleFloor(script(waiting)),
      await idleFloor(script(waiting)),
      await idleFloor(script(waiting)),
    ]);
    const own = (figure?: { own?: number }) =>
      figure?.own === undefined ? "" : `, its own (private) part ${mib(figure.own)}`;
    if (floorIdle) {
      out(`  idle floor, a script that waits on stdin: ${mib(floorIdle.rss)}${own(floorIdle)}`);
    }
    const idle = async (name: string, limitMib: number, command: string[], env = {}) => {
      const figure = idleFigure([
        await idleKib(command, env),
        await idleKib(command, env),
        await idleKib(command, env),
      ]);
      if (figure === undefined) return;
      const vs = floorIdle ? `, ${against(figure.rss, floorIdle.rss, limitMib * 1024, mib)}` : "";
      out(`  ${name}: idle RSS ${mib(figure.rss)}${vs}${own(figure)}`);
    };
    // Not a target: what any process that starts the upstream and talks to it once costs
    // (the child, its pipes, streams), which a bridge in front of a command cannot avoid.
    const spawning = `${dir}/spawn_wait.js`;
    await Deno.writeTextFile(spawning, spawnAndWait(UPSTREAM));
    const spawnIdle = idleFigure([
      await idleFloor(script(spawning)),
      await idleFloor(script(spawning)),
      await idleFloor(script(spawning)),
    ]);
    if (spawnIdle && floorIdle) {
      out(
        `  (a script that starts the upstream, reads its answer and waits: ${
          mib(spawnIdle.rss)
        }, floor + ${mib(spawnIdle.rss - floorIdle.rss)})`,
      );
    }
    await idle("stdio upstream", 8, [...bridge, "--", ...UPSTREAM]);
    const http = await httpUpstream();
    try {
      await idle(
        "URL upstream without sign-in",
        10,
        [...bridge, "--header-env", "Authorization=BENCH_AUTHORIZATION", http.url],
        { BENCH_AUTHORIZATION: "Bearer bench" },
      );
    } finally {
      await http.stop();
    }
    const target = hostTarget();
    if (target !== undefined) {
      const binary = await compiledBytes(
        `${bundle}/${BUNDLE_ENTRY}`,
        (output) => compileArgs(target, output, `${bundle}/${BUNDLE_ENTRY}`),
      );
      const floorBinary = await compiledBytes(oneLine, (output) => [
        "compile",
        "--no-config",
        "--output",
        output,
        oneLine,
      ]);
      if (binary && floorBinary) {
        out(
          `  compiled binary - Deno: ${mb(binary.bytes)} (target <= 3 MB: ${
            verdict(binary.bytes <= 3e6)
          }), embedded files ${binary.files}; a compiled one-line script - Deno: ${
            mb(floorBinary.bytes)
          }: the bridge adds ${mb(binary.bytes - floorBinary.bytes)}`,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
