/**
 * The fault campaign of issue 29: 2,000 tools/call, 16 in flight, through a
 * TCP proxy that injects faults with a seeded generator (resets before any
 * byte, while the server runs the calls, in the middle of an answer; stalls
 * of 3-8 s; latency), then 200 calls without faults, in front of a TLS server
 * (node:http2) whose tool `work` counts its executions per id. The bridge
 * over HTTP/2, the bridge over HTTP/1.1 (a server that refuses HTTP/2), the
 * bridge over the pass-through transport (`--protocol auto`, a 2025-11-25
 * server), and mcp-remote 0.15.1 (the same 2025-11-25 server) as the anchor.
 *
 * Prints for each: calls, ids that ran twice, calls without an answer,
 * failures by cause, p50/p99 of the answers, and the peak RSS of the stdio
 * process. A benchmark: nothing here fails on a slow machine.
 *
 * Run: `deno task bench:faults` (`FAULT_SEED`, `FAULT_CALLS` to change them).
 *
 * @module
 */

import { type FaultPlan, startFaultProxy } from "../tests/fixtures/fault_proxy.ts";
import { makeCertificates } from "../tests/fixtures/http_tls.ts";
import { serveWork } from "../tests/fixtures/work_server.ts";
import { type CampaignFigures, runCampaign } from "../tests/process/fault_campaign.ts";
import { mcpRemote } from "./bench_http.ts";
import { bridgeCommand } from "./bridge_command.ts";

const enc = new TextEncoder();
const out = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));

const SEED = Number(Deno.env.get("FAULT_SEED") ?? Math.floor(Math.random() * 2 ** 31));
const CALLS = Number(Deno.env.get("FAULT_CALLS") ?? 2000);
const CALM = 200;
const IN_FLIGHT = 16;
/** The bridge's --call-timeout; the client waits this long plus a margin. */
const CALL_TIMEOUT_S = 30;
const LIMIT_MS = 70_000;

const STORM: FaultPlan = {
  resetBeforeByte: 0.1,
  everyMs: [200, 800],
  resetNow: 0.4,
  resetMidAnswer: 0.3,
  midAnswerBytes: [1_000, 40_000],
  stall: 0.3,
  stallMs: [3_000, 8_000],
  latencyMs: [0, 20],
};

interface Target {
  readonly name: string;
  readonly revision: "modern" | "legacy";
  readonly http1Only: boolean;
  readonly argv: (url: string, caFile: string) => string[];
  readonly env: (caFile: string) => Record<string, string>;
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!/^(https?|no|all)_proxy$/i.test(name)) env[name] = value;
  }
  return env;
}

const bridge = (protocol: string[]) => (url: string, caFile: string) =>
  bridgeCommand("--ca-file", caFile, "--call-timeout", String(CALL_TIMEOUT_S), ...protocol, url);

function line(name: string, f: CampaignFigures): string {
  const failures = (figures: CampaignFigures["storm"]) =>
    Object.entries(figures.failures).map(([cause, n]) => `${cause} ${n}`).join(", ") || "none";
  return [
    `${name}:`,
    `  storm: ${f.storm.calls} calls, ${f.storm.results} results, failures: ${
      failures(f.storm)
    }, no answer ${f.storm.unanswered}, extra answers ${f.storm.extraAnswers}, p50 ${f.storm.p50} ms, p99 ${f.storm.p99} ms`,
    `  calm:  ${f.calm.calls} calls, ${f.calm.results} results, failures: ${
      failures(f.calm)
    }, no answer ${f.calm.unanswered}, p50 ${f.calm.p50} ms, p99 ${f.calm.p99} ms`,
    `  ids that ran twice: ${f.doubles}; RSS ${f.rssStartMb.toFixed(0)} MB after initialize, peak ${
      f.rssPeakMb.toFixed(0)
    } MB, ${f.rssEndMb.toFixed(0)} MB at the end; exit ${f.exitCode}`,
  ].join("\n");
}

if (import.meta.main) {
  const certs = await makeCertificates();
  out(`Fault campaign: ${CALLS} calls + ${CALM} calm, ${IN_FLIGHT} in flight, seed ${SEED}`);
  const targets: Target[] = [
    {
      name: "bridge, HTTP/2",
      revision: "modern",
      http1Only: false,
      argv: bridge([]),
      env: baseEnv,
    },
    {
      name: "bridge, HTTP/1.1",
      revision: "modern",
      http1Only: true,
      argv: bridge([]),
      env: baseEnv,
    },
    {
      name: "bridge, pass-through (--protocol auto), HTTP/2",
      revision: "legacy",
      http1Only: false,
      argv: bridge(["--protocol", "auto"]),
      env: baseEnv,
    },
  ];
  const remote = await mcpRemote(out);
  if (typeof remote === "string") out(`mcp-remote: ${remote}`);
  else {
    targets.push({
      name: "mcp-remote 0.15.1 (2025-11-25 server)",
      revision: "legacy",
      http1Only: false,
      argv: (url) => [remote.bin, url],
      env: (caFile) => ({ ...baseEnv(), NODE_EXTRA_CA_CERTS: caFile }),
    });
  }
  try {
    for (const target of targets) {
      const server = await serveWork({
        cert: certs.cert,
        key: certs.key,
        revision: target.revision,
        http1Only: target.http1Only,
      });
      const proxy = await startFaultProxy(server.port, SEED);
      try {
        const figures = await runCampaign({
          argv: target.argv(`https://127.0.0.1:${proxy.port}/mcp`, certs.caFile),
          env: target.env(certs.caFile),
          server,
          proxy,
          storm: { calls: CALLS, plan: STORM },
          calm: { calls: CALM, plan: null },
          inFlight: IN_FLIGHT,
          workMs: [20, 300],
          bytes: [100, 30_000],
          limitMs: LIMIT_MS,
          seed: SEED,
          stderr: "null",
        });
        out(line(target.name, figures));
        out(`  faults: ${JSON.stringify(proxy.counts)}`);
      } catch (error) {
        out(`${target.name}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await proxy.close();
        await server.close();
      }
    }
  } finally {
    await Deno.remove(certs.dir, { recursive: true }).catch(() => {});
  }
  Deno.exit(0);
}
