/**
 * What one bridge costs to start and to keep, against the floor of a Deno
 * process: the time and peak RSS of `--version` and `--help`, the time until
 * the initialize of a client is answered in front of a stdio upstream (and
 * until the upstream alone answers its first request), the idle RSS of a
 * bridge in front of a stdio upstream and of one in front of a URL upstream
 * without sign-in (with the idle floor of a script that waits, and the part
 * of each that is the process's own: the rest is the Deno binary's pages,
 * shared by every bridge), and the embedded files of the compiled binary. Prints
 * each figure with its target (issue 31) and the ratios. A benchmark, not a
 * test: nothing here fails on a slow machine (`tests/release/payload_test.ts`
 * checks the payload).
 *
 * The program runs as `deno run -q -P main.ts` (the compiled binary needs
 * the denort of its target); the floor is a one-line script run the same
 * way, with the project's deno.json, and for reference without any.
 *
 * Run: `deno task bench:start` (Linux: the peak RSS of a short process is
 * read with GNU time, `/usr/bin/time`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { embeddedBytes, PAYLOAD_LIMIT_BYTES, payloadPlan } from "./payload.ts";
import { memoryOf } from "./proc_memory.ts";
import { compileArgs, hostTarget } from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const enc = new TextEncoder();
const dec = new TextDecoder();
const out = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));

/** Runs of each timed figure (the median is printed). */
const RUNS = 9;
/** How long a bridge stays idle before its RSS is read. */
const IDLE_MS = 1500;

const BRIDGE = [deno, "run", "-q", "-P", `${root}main.ts`];
const UPSTREAM = [deno, "run", "-q", "-A", `${root}tests/fixtures/modern_server.ts`];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
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
async function idleFloor(script: string) {
  const child = new LineChild([deno, "run", "-q", "-P", "--config", `${root}deno.json`, script]);
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

/** The embedded files of `deno compile` for this host, with DENORT_BIN set to this Deno. */
async function payloadBytes(): Promise<number | undefined> {
  const target = hostTarget();
  if (target === undefined) return undefined;
  const dir = await Deno.makeTempDir();
  try {
    const payload = await payloadPlan(`${root}main.ts`, root);
    const result = await new Deno.Command(deno, {
      args: compileArgs(target, `${dir}/bridge`, `${root}main.ts`, payload),
      cwd: root,
      env: { DENORT_BIN: deno, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    return embeddedBytes(dec.decode(result.stdout) + dec.decode(result.stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/one_line.ts`;
  await Deno.writeTextFile(script, 'console.log("one line");\n');
  try {
    out(`bench:start (Deno ${Deno.version.deno}, ${Deno.build.target}), medians of ${RUNS} runs`);
    const bare = await shortRun([deno, "run", "-q", "--no-config", script]);
    const floor = await shortRun([deno, "run", "-q", "-P", "--config", `${root}deno.json`, script]);
    const kib = (run: { kib?: number }) => run.kib === undefined ? "n/a" : mib(run.kib);
    out(`  floor, a one-line script with the project's deno.json: ${ms(floor.ms)}, ${kib(floor)}`);
    out(`  (the same script without a config: ${ms(bare.ms)}, ${kib(bare)})`);
    for (const flag of ["--version", "--help"]) {
      const run = await shortRun([...BRIDGE, flag]);
      const over = run.ms - floor.ms;
      const mb = run.kib === undefined ? undefined : run.kib * 1024 / 1e6;
      out(
        `  ${flag}: ${ms(run.ms)} (floor ${over < 0 ? "-" : "+"} ${
          ms(Math.abs(over))
        }, target <= + 25 ms: ${verdict(over <= 25)}), ${kib(run)}${
          mb === undefined ? "" : ` = ${mb.toFixed(1)} MB (target <= 32 MB: ${verdict(mb <= 32)})`
        }`,
      );
    }
    const alone: number[] = [];
    const bridged: number[] = [];
    await answeredMs(UPSTREAM, DISCOVER);
    for (let i = 0; i < RUNS; i++) {
      alone.push(await answeredMs(UPSTREAM, DISCOVER));
      bridged.push(await answeredMs([...BRIDGE, "--", ...UPSTREAM], INITIALIZE));
    }
    const extra = median(bridged) - median(alone);
    out(
      `  stdio upstream: initialize answered after ${ms(median(bridged))}; the upstream alone ` +
        `answers server/discover after ${ms(median(alone))}: + ${ms(extra)} (target <= + 60 ms: ${
          verdict(extra <= 60)
        }), ratio ${(median(bridged) / median(alone)).toFixed(2)}`,
    );
    const waiting = `${dir}/wait.ts`;
    await Deno.writeTextFile(waiting, "setTimeout(() => {}, 60_000);\n");
    const floorIdle = idleFigure([
      await idleFloor(waiting),
      await idleFloor(waiting),
      await idleFloor(waiting),
    ]);
    const own = (figure?: { own?: number }) =>
      figure?.own === undefined ? "" : `, of which its own (private) ${mib(figure.own)}`;
    if (floorIdle) {
      out(
        `  idle floor, a script that waits (the same config): ${mib(floorIdle.rss)}${
          own(floorIdle)
        }`,
      );
    }
    const stdioIdle = idleFigure([
      await idleKib([...BRIDGE, "--", ...UPSTREAM]),
      await idleKib([...BRIDGE, "--", ...UPSTREAM]),
      await idleKib([...BRIDGE, "--", ...UPSTREAM]),
    ]);
    if (stdioIdle) {
      out(
        `  stdio upstream: idle RSS of the bridge ${mib(stdioIdle.rss)} (target <= 38 MiB: ${
          verdict(stdioIdle.rss <= 38 * 1024)
        })${own(stdioIdle)}`,
      );
    }
    const http = await httpUpstream();
    try {
      const urlBridge = [...BRIDGE, "--header-env", "Authorization=BENCH_AUTHORIZATION", http.url];
      const env = { BENCH_AUTHORIZATION: "Bearer bench" };
      const urlIdle = idleFigure([
        await idleKib(urlBridge, env),
        await idleKib(urlBridge, env),
        await idleKib(urlBridge, env),
      ]);
      if (urlIdle) {
        out(
          `  URL upstream without sign-in: idle RSS of the bridge ${
            mib(urlIdle.rss)
          } (target <= 42 MiB: ${verdict(urlIdle.rss <= 42 * 1024)})${own(urlIdle)}`,
        );
      }
    } finally {
      await http.stop();
    }
    const payload = await payloadBytes();
    if (payload !== undefined) {
      out(
        `  compiled payload (embedded files): ${(payload / 1e6).toFixed(2)} MB (target <= ${
          PAYLOAD_LIMIT_BYTES / 1e6
        } MB: ${verdict(payload <= PAYLOAD_LIMIT_BYTES)})`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
