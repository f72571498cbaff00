/**
 * A campaign of tools/call through a stdio proxy (the bridge, or mcp-remote)
 * in front of the `work` server (`tests/fixtures/work_server.ts`) behind the
 * fault proxy (`tests/fixtures/fault_proxy.ts`): a storm phase with faults,
 * then a calm one without. Each call is `work {id, ms, bytes}` with its
 * JSON-RPC id as its id, at most `inFlight` at once. It records every answer
 * (a result, an error with `data.cause`, an error without), the latency of
 * each call, the calls without an answer in their time limit, and the
 * resident memory of the proxy process. For the fault tests
 * (`tests/process/faults_test.ts`) and `deno task bench:faults`.
 */

import { rssKib } from "../../scripts/proc_memory.ts";
import type { FaultPlan, FaultProxy } from "../fixtures/fault_proxy.ts";
import { seeded } from "../fixtures/fault_proxy.ts";
import type { WorkServer } from "../fixtures/work_server.ts";

const enc = new TextEncoder();

type Obj = Record<string, unknown>;

/** One phase: its calls and its faults (null: none). */
export interface Phase {
  readonly calls: number;
  readonly plan: FaultPlan | null;
  /**
   * Wait first until tools/list gets a result (at most `limitMs` of the
   * campaign, polled every 250 ms): the pass-through starts a new session
   * after a lost connection, with the listen stream's wait (0.5 s doubling),
   * and calls fail at once until it is back.
   */
  readonly settle?: boolean;
}

/** What a campaign runs. */
export interface CampaignOptions {
  /** The stdio proxy: its command line and environment. */
  readonly argv: readonly string[];
  readonly env: Record<string, string>;
  readonly server: WorkServer;
  readonly proxy: FaultProxy;
  readonly storm: Phase;
  readonly calm: Phase;
  readonly inFlight: number;
  /** The time of each call at the server, and the size of its answer. */
  readonly workMs: readonly [number, number];
  readonly bytes: readonly [number, number];
  /** An answer later than this after its request counts as no answer. */
  readonly limitMs: number;
  /** The seed of the calls' sizes (the proxy has its own). */
  readonly seed: number;
  /** The stderr of the proxy process (null: dropped). */
  readonly stderr?: "piped" | "null";
}

/** The answer to one call. */
export type Answer = "result" | "error_with_cause" | "error_without_cause" | "tool_error";

/** What a phase gave. */
export interface PhaseFigures {
  calls: number;
  answered: number;
  /** Calls that got no answer within the limit. */
  unanswered: number;
  /** Calls that got more than one answer. */
  extraAnswers: number;
  results: number;
  /** Errors by `data.cause` (`(none)` for an error without one, `tool error` for isError). */
  failures: Record<string, number>;
  p50: number;
  p99: number;
  /** The slowest answer. */
  maxMs: number;
}

/** What the campaign gave. */
export interface CampaignFigures {
  storm: PhaseFigures;
  calm: PhaseFigures;
  /** Ids that ran more than once at the server. */
  doubles: number;
  /** The resident memory of the proxy process: after initialize, at its peak, at the end. */
  rssStartMb: number;
  rssPeakMb: number;
  rssEndMb: number;
  /** The exit code of the proxy process at the end of its stdin. */
  exitCode: number;
  /** The connections of the fault proxy still open after the exit. */
  openAfterExit: number;
  stderr: string;
}

/** The resident memory (VmRSS) of `pid`, in MB (0 when it ended). */
async function rssMb(pid: number): Promise<number> {
  return ((await rssKib(pid)) ?? 0) / 1024;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Runs the campaign; the proxy process ends at the end of its stdin. */
export async function runCampaign(options: CampaignOptions): Promise<CampaignFigures> {
  const random = seeded(options.seed);
  const between = ([low, high]: readonly [number, number]) =>
    Math.round(low + random() * (high - low));
  const child = new Deno.Command(options.argv[0]!, {
    args: options.argv.slice(1),
    env: options.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: options.stderr ?? "piped",
  }).spawn();
  let stderr = "";
  const stderrDone = options.stderr === "null" ? Promise.resolve() : (async () => {
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderr = (stderr + text).slice(-20_000);
    }
  })();
  const writer = child.stdin.getWriter();
  const send = (message: Obj) => writer.write(enc.encode(JSON.stringify(message) + "\n"));
  const waiting = new Map<number | string, (message: Obj) => void>();
  const answers = new Map<number | string, number>();
  const reading = (async () => {
    let rest = "";
    for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += text;
      let nl;
      while ((nl = rest.indexOf("\n")) !== -1) {
        const line = rest.slice(0, nl).trim();
        rest = rest.slice(nl + 1);
        if (!line) continue;
        let message: Obj;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        const id = message.id as number | string | undefined;
        if (id === undefined || !("result" in message || "error" in message)) continue;
        answers.set(id, (answers.get(id) ?? 0) + 1);
        waiting.get(id)?.(message);
      }
    }
  })();
  const answer = (id: number | string, limitMs: number) =>
    new Promise<Obj | null>((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(null);
      }, limitMs);
      waiting.set(id, (message) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(message);
      });
    });

  const init = answer("init", 60_000);
  await send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "fault-campaign", version: "1" },
    },
  });
  const initialized = await init;
  if (initialized === null || !("result" in initialized)) {
    await writer.close().catch(() => {});
    child.kill("SIGKILL");
    await child.status;
    await stderrDone;
    throw new Error(`initialize failed: ${JSON.stringify(initialized)}\n${stderr}`);
  }
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const rssStartMb = await rssMb(child.pid);
  let rssPeakMb = rssStartMb;
  const sampler = setInterval(async () => {
    rssPeakMb = Math.max(rssPeakMb, await rssMb(child.pid));
  }, 500);

  let nextId = 1;
  let probes = 0;
  const settle = async () => {
    const until = performance.now() + options.limitMs * 4;
    while (performance.now() < until) {
      const id = `probe-${probes++}`;
      const done = answer(id, options.limitMs);
      await send({ jsonrpc: "2.0", id, method: "tools/list" });
      const message = await done;
      if (message !== null && "result" in message) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`the upstream session did not come back after the storm\n${stderr}`);
  };
  const runPhase = async (phase: Phase): Promise<PhaseFigures> => {
    options.proxy.setPlan(phase.plan);
    if (phase.settle) await settle();
    const figures: PhaseFigures = {
      calls: phase.calls,
      answered: 0,
      unanswered: 0,
      extraAnswers: 0,
      results: 0,
      failures: {},
      p50: 0,
      p99: 0,
      maxMs: 0,
    };
    const latencies: number[] = [];
    const ids: number[] = [];
    let left = phase.calls;
    const worker = async () => {
      while (left > 0) {
        left--;
        const id = nextId++;
        ids.push(id);
        const done = answer(id, options.limitMs);
        const started = performance.now();
        await send({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: {
            name: "work",
            arguments: { id, ms: between(options.workMs), bytes: between(options.bytes) },
          },
        });
        const message = await done;
        const ms = performance.now() - started;
        if (message === null) {
          figures.unanswered++;
          continue;
        }
        figures.answered++;
        latencies.push(ms);
        if ("result" in message) {
          if ((message.result as Obj).isError === true) {
            figures.failures["tool error"] = (figures.failures["tool error"] ?? 0) + 1;
          } else figures.results++;
        } else {
          const data = (message.error as Obj).data as Obj | undefined;
          const cause = typeof data?.cause === "string" ? data.cause : "(none)";
          figures.failures[cause] = (figures.failures[cause] ?? 0) + 1;
        }
      }
    };
    await Promise.all(Array.from({ length: options.inFlight }, worker));
    // A late second answer would come within this wait.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const id of ids) if ((answers.get(id) ?? 0) > 1) figures.extraAnswers++;
    latencies.sort((a, b) => a - b);
    figures.p50 = Math.round(percentile(latencies, 0.5));
    figures.p99 = Math.round(percentile(latencies, 0.99));
    figures.maxMs = Math.round(latencies.at(-1) ?? 0);
    return figures;
  };
  const storm = await runPhase(options.storm);
  const calm = await runPhase(options.calm);
  clearInterval(sampler);
  const rssEndMb = await rssMb(child.pid);
  await writer.close().catch(() => {});
  const exit = await Promise.race([
    child.status,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
  ]);
  if (exit === null) {
    child.kill("SIGKILL");
    await child.status;
  }
  await reading.catch(() => {});
  await stderrDone;
  // The proxy process's connections close with it; give the fault proxy a moment to see it.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return {
    storm,
    calm,
    doubles: options.server.doubles().length,
    rssStartMb,
    rssPeakMb,
    rssEndMb,
    exitCode: exit?.code ?? -1,
    openAfterExit: options.proxy.open(),
    stderr,
  };
}
