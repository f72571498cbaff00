/**
 * The benchmark: the same raw JSON-RPC client and the same upstream (the
 * SDK v2 fixture server), directly and through the bridge. Prints latency,
 * throughput, the time and peak RSS of the bridge for large results, the
 * ratios bridged/direct, the cost of the result rules and the progress
 * path, and the peak RSS under back pressure (`./bench_pressure.ts`). A
 * benchmark, not a test: nothing here fails on a slow machine.
 *
 * Run: `deno task bench`
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { applyResultRules } from "../lib/translate/results.ts";
import { ProgressRelay } from "../lib/translate/progress.ts";
import { createLogger, type Logger, SILENT_LOGGER } from "../lib/log.ts";
import type { JsonObject } from "../lib/jsonrpc/message.ts";
import { VSCODE_PROFILE } from "../lib/vscode/profile.ts";
import { benchHttp } from "./bench_http.ts";
import { benchLarge } from "./bench_large.ts";
import { benchPassthrough } from "./bench_passthrough.ts";
import { benchPressure } from "./bench_pressure.ts";
import { benchRemote } from "./bench_remote.ts";
import { benchServe } from "./bench_serve.ts";
import { bridgeCommand } from "./bridge_command.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const UPSTREAM = [deno, "run", "-A", `${root}tests/fixtures/modern_server.ts`];
const BRIDGE = bridgeCommand("--");
/** The floor of one more process: a relay that copies bytes and reads nothing. */
const RELAY = [deno, "run", "--allow-run", `${root}scripts/bench_relay.ts`];
const enc = new TextEncoder();
const out = (line: string) => Deno.stdout.writeSync(enc.encode(line + "\n"));

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A line client over a child process; the same code for both paths. */
class LineClient {
  child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, (line: string) => void>();
  #nextId = 1;
  modern: boolean;

  constructor(command: string[], modern: boolean) {
    this.modern = modern;
    this.child = new Deno.Command(command[0]!, {
      args: command.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#read();
  }

  async #read() {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.child.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const idMatch = /"id":(\d+)[,}]/.exec(
          line.length > 200 ? line.slice(0, 100) + line.slice(-100) : line,
        );
        if (idMatch) this.#waiting.get(Number(idMatch[1]))?.(line);
      }
    }
  }

  request(method: string, params: JsonObject = {}): Promise<string> {
    const id = this.#nextId++;
    const full = this.modern ? { ...params, _meta: ENVELOPE } : params;
    const done = new Promise<string>((resolve) =>
      this.#waiting.set(id, (line) => {
        this.#waiting.delete(id);
        resolve(line);
      })
    );
    this.#writer.write(
      enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params: full }) + "\n"),
    );
    return done;
  }

  async start(): Promise<void> {
    if (this.modern) await this.request("server/discover");
    else {
      await this.request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      });
      await this.#writer.write(
        enc.encode('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'),
      );
    }
  }

  async stop(): Promise<void> {
    await this.#writer.close();
    await this.child.status;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function latency(client: LineClient, n: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 100; i++) {
    await client.request("tools/call", { name: "echo", arguments: { text: "w" } });
  }
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", { name: "echo", arguments: { text: "x" } });
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

async function throughput(client: LineClient, inFlight: number, total: number): Promise<number> {
  let sent = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (sent < total) {
      sent++;
      await client.request("tools/call", { name: "echo", arguments: { text: "x" } });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return total / ((performance.now() - t0) / 1000);
}

function toolList(): JsonObject {
  const tools = [];
  for (let i = 0; i < 500; i++) {
    tools.push({
      name: `tool_${i}`,
      description: "A tool with a nested schema.",
      inputSchema: {
        type: "object",
        properties: {
          tags: { type: "array" },
          matrix: {
            type: "array",
            items: { type: "array", items: false, prefixItems: [{ type: "number" }] },
          },
          filter: {
            anyOf: [{ type: "string" }, {
              type: "object",
              properties: { ids: { type: "array", items: null } },
            }],
          },
          nested: {
            type: "object",
            properties: { a: { type: "object", properties: { b: { type: "string" } } } },
          },
        },
        $defs: { list: { type: "array" } },
      },
      outputSchema: i % 2 ? { type: "object" } : { type: "string" },
    });
  }
  return { resultType: "complete", ttlMs: 1, cacheScope: "private", nextCursor: null, tools };
}

const fmt = (n: number, d = 2) => n.toFixed(d);

out("mcp-bridge-vscode benchmark (same client, same upstream; direct vs through the bridge)\n");
const direct = new LineClient(UPSTREAM, true);
await direct.start();
const bridged = new LineClient([...BRIDGE, ...UPSTREAM], false);
await bridged.start();

const relayed = new LineClient([...RELAY, ...UPSTREAM], true);
await relayed.start();
const clients = { direct, bridged, relayed };
type Name = keyof typeof clients;
const names = Object.keys(clients) as Name[];

/**
 * Runs `measure` on the three clients in turn, `rounds` times, and gives the
 * median of each client without its first round (the warm-up): a machine
 * that warms up or gets busy during the run weighs on all three alike.
 */
async function inTurn<T>(
  rounds: number,
  measure: (client: LineClient) => Promise<T>,
  key: (value: T) => number,
): Promise<Record<Name, T>> {
  const seen = { direct: [] as T[], bridged: [] as T[], relayed: [] as T[] };
  for (let round = 0; round < rounds; round++) {
    for (const name of names) seen[name].push(await measure(clients[name]));
  }
  const median = (values: T[]) =>
    values.slice(1).sort((a, b) => key(a) - key(b))[(values.length - 1) >> 1]!;
  return {
    direct: median(seen.direct),
    bridged: median(seen.bridged),
    relayed: median(seen.relayed),
  };
}

const lat = await inTurn(6, (client) => latency(client, 1000), (l) => l.p50);
const [ld, lb, lr] = [lat.direct, lat.bridged, lat.relayed];
out(`small tools/call latency (median of 5 rounds in turn, 1000 calls each)`);
out(`  direct  p50 ${fmt(ld.p50, 3)} ms p99 ${fmt(ld.p99)} ms`);
out(
  `  relay   p50 ${fmt(lr.p50, 3)} ms p99 ${
    fmt(lr.p99)
  } ms (a process that copies bytes: the floor)`,
);
out(`  bridged p50 ${fmt(lb.p50, 3)} ms p99 ${fmt(lb.p99)} ms`);
out(
  `  bridged/relay p50 ${fmt(lb.p50 / lr.p50)} (target <= 1.2); bridged/direct p50 ${
    fmt(lb.p50 / ld.p50)
  }, p99 ${fmt(lb.p99 / ld.p99)}`,
);
for (const inFlight of [64, 256]) {
  const t = await inTurn(5, (client) => throughput(client, inFlight, 5_000), (x) => x);
  out(
    `throughput ${inFlight} in flight: direct ${fmt(t.direct, 0)}, relay ${fmt(t.relayed, 0)}, ` +
      `bridged ${fmt(t.bridged, 0)} req/s; bridged/relay ${fmt(t.bridged / t.relayed)}` +
      (inFlight === 256 ? " (target >= 0.9)" : "") +
      `, bridged/direct ${fmt(t.bridged / t.direct)}`,
  );
}
await direct.stop();
await bridged.stop();
await relayed.stop();

// Large results from an upstream that costs nothing, read by a client that only finds the
// newline: the SDK server and a line client that decodes would hide the bridge's own figures.
await benchLarge(out);

/**
 * The median time of the result rules on fresh parsed copies of a tools/list,
 * after 50 lists that are not timed: the median of the first 101 lists
 * depended on when the JIT compiler finished (0.45 to 1.6 ms from one run to
 * the next, for the same code).
 */
function rulesMedianMs(log: Logger): number {
  const ctx = { quirks: VSCODE_PROFILE.quirks, icons: "all" as const, log };
  const text = JSON.stringify(toolList());
  const times: number[] = [];
  for (let i = 0; i < 151; i++) {
    const list = JSON.parse(text);
    const t0 = performance.now();
    applyResultRules("tools/list", list, ctx);
    if (i >= 50) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[50]!;
}
const silentMs = rulesMedianMs(SILENT_LOGGER);
const loggedMs = rulesMedianMs(createLogger("bench", "info", () => {}));
out(
  `result rules, tools/list of 500 tools with nested schemas: median ${
    fmt(silentMs, 3)
  } ms per list ` +
    `(target <= 1 ms); ${fmt(loggedMs, 3)} ms with its 2,500 info lines built`,
);

let sent = 0;
const relay = new ProgressRelay(0, 50, () => sent++);
const t1 = performance.now();
for (let i = 0; i < 1_000_000; i++) {
  relay.relay({ progress: i, total: 1_000_000, message: undefined });
}
out(
  `progress path: ${
    fmt((performance.now() - t1) * 1000 / 1_000_000, 3)
  } µs per upstream notification (${sent} relayed)`,
);

// The embedded bridge (M5): the same server (scripts/embed_server.ts) and the same client,
// a small tools/call on the legacy path in each case.
const EMBED_SERVER = [deno, "run", "-q", "-P", `${root}scripts/embed_server.ts`];

/** Latency and throughput of one legacy-path setup of the embedded server. */
async function embeddedFigures(
  command: string[],
): Promise<{ p50: number; p99: number; rps: number }> {
  const client = new LineClient(command, false);
  await client.start();
  const { p50, p99 } = await latency(client, 2000);
  const rps = await throughput(client, 64, 10_000);
  await client.stop();
  return { p50, p99, rps };
}

/** The legacy path with the client in the same process too: web streams, no pipe at all. */
async function embeddedInProcessP50(n: number): Promise<number> {
  const { serveStdio } = await import("../lib/vscode/serve.ts");
  const { buildServer } = await import("./embed_server.ts");
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const served = serveStdio(buildServer, {
    input: input.readable,
    output: output.writable,
    logLevel: "error",
  });
  const writer = input.writable.getWriter();
  const reader = output.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const nl = buffer.indexOf("\n");
      if (nl !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the output ended");
      buffer += value;
    }
  };
  const call = async (id: number, method: string, params: JsonObject) => {
    await writer.write(enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"));
    for (;;) if ((await nextLine()).includes(`"id":${id},`)) return;
  };
  await call(0, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench", version: "1" },
  });
  const times: number[] = [];
  for (let i = 1; i <= n + 100; i++) {
    const t0 = performance.now();
    await call(i, "tools/call", { name: "echo", arguments: { text: "x" } });
    if (i > 100) times.push(performance.now() - t0);
  }
  await writer.close();
  await served;
  times.sort((a, b) => a - b);
  return percentile(times, 0.5);
}

/** The embedded path vs the stdio bridge in front of the same server vs the SDK's legacy shim. */
async function embeddedBench(): Promise<void> {
  out("\nembedded bridge (same server, same client, legacy path, small tools/call):");
  const embedded = await embeddedFigures(EMBED_SERVER);
  const bridgedSdk = await embeddedFigures([...BRIDGE, ...EMBED_SERVER, "--sdk"]);
  const shim = await embeddedFigures([...EMBED_SERVER, "--sdk"]);
  const line = (label: string, f: { p50: number; p99: number; rps: number }) =>
    out(
      `  ${label} p50 ${fmt(f.p50)} ms p99 ${fmt(f.p99)} ms, 64 in flight ${fmt(f.rps, 0)} req/s`,
    );
  line("embedded (one process)            ", embedded);
  line("stdio bridge + server (two)       ", bridgedSdk);
  line("SDK serveStdio legacy shim (one)  ", shim);
  out(
    `  embedded / stdio bridge: p50 ratio ${fmt(embedded.p50 / bridgedSdk.p50)}, throughput ` +
      `ratio ${fmt(embedded.rps / bridgedSdk.rps)}; embedded / SDK shim: p50 ratio ${
        fmt(embedded.p50 / shim.p50)
      }, throughput ratio ${fmt(embedded.rps / shim.rps)}`,
  );
  out(
    `  embedded with the client in the same process: p50 ${
      fmt(await embeddedInProcessP50(2000), 3)
    } ms`,
  );
}

await embeddedBench();

// The HTTP upstream: its own module, so each part of the benchmark stays small.
await benchHttp(out);
await benchRemote(out);

// The pass-through of --protocol auto: a server of revision 2025-11-25 over stdio.
await benchPassthrough(out);

// Back pressure: the peak RSS of the bridge when a peer does not read.
await benchPressure(out);

// serve: one process with 10 sessions against 10 stdio bridges; the HTTP face against stdio.
await benchServe(out);
