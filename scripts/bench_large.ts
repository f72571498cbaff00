/**
 * The large-result part of the benchmark: a 63 MiB tool result from an
 * upstream that costs nothing (tests/fixtures/large_server.ts writes a
 * prebuilt line), read by a client that only looks for the newline, so the
 * figures are the bridge's own. Direct, through the plain relay process,
 * through the store-and-forward relay (`bench_relay.ts --store`: the least
 * a bridge that follows the spec can do) and through the bridge, three results
 * in a row in each process: the time of each, and the bridge's peak RSS
 * after each (no resident garbage pile-up).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { bridgeCommand } from "./bridge_command.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const enc = new TextEncoder();
const UPSTREAM = [deno, "run", "-A", `${root}tests/fixtures/large_server.ts`];
const BRIDGE = bridgeCommand("--");
const RELAY = [deno, "run", "--allow-run", `${root}scripts/bench_relay.ts`];
/** The floor of a bridge that follows the spec: it holds each line until it is whole. */
const STORE = [...RELAY, "--store"];
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A client that sends one request at a time and waits for the newline of the answer. */
class ByteClient {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #id = 1;

  constructor(command: string[], readonly modern: boolean) {
    this.child = new Deno.Command(command[0]!, {
      args: command.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reader = this.child.stdout.getReader();
  }

  /** Sends a request; resolves with the bytes of its answer line. */
  async request(method: string, params: Record<string, unknown> = {}): Promise<number> {
    const full = this.modern ? { ...params, _meta: ENVELOPE } : params;
    const message = { jsonrpc: "2.0", id: this.#id++, method, params: full };
    await this.#writer.write(enc.encode(JSON.stringify(message) + "\n"));
    let bytes = 0;
    for (;;) {
      const { done, value } = await this.#reader.read();
      if (done) throw new Error("the output ended");
      const nl = value.indexOf(0x0a);
      if (nl !== -1) return bytes + nl;
      bytes += value.length;
    }
  }

  async start(): Promise<void> {
    if (this.modern) await this.request("server/discover");
    else {
      await this.request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      });
    }
  }

  async stop(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#reader.cancel().catch(() => {});
    await this.child.status;
  }
}

function procStatus(pid: number, key: "VmHWM" | "VmRSS"): number {
  const status = new TextDecoder().decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).outputSync().stdout,
  );
  return Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/** The times of three large results in one process, and the peak RSS of that process. */
async function run(command: string[], modern: boolean, bytes: number) {
  const client = new ByteClient(command, modern);
  await client.start();
  const times: number[] = [];
  const peaks: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await client.request("tools/call", { name: "big", arguments: { bytes } });
    times.push(performance.now() - t0);
    peaks.push(procStatus(client.child.pid, "VmHWM"));
  }
  const rss = procStatus(client.child.pid, "VmRSS");
  await client.stop();
  return { times, peaks, rss };
}

/** The median of each position over the rounds. */
function medians(rounds: number[][]): number[] {
  return rounds[0]!.map((_, i) => {
    const sorted = rounds.map((r) => r[i]!).sort((a, b) => a - b);
    return sorted[sorted.length >> 1]!;
  });
}

/**
 * Prints the large-result figures: each variant runs in its own process,
 * the variants in turn, three rounds; each figure is the median of its
 * position over the rounds.
 */
export async function benchLarge(
  out: (line: string) => void,
  bytes = 63 * 1024 * 1024,
  rounds = 3,
): Promise<void> {
  const mib = (bytes / 1024 / 1024).toFixed(0);
  const runs = { direct: [] as number[][], relay: [] as number[][], store: [] as number[][] };
  const bridgedRuns: Awaited<ReturnType<typeof run>>[] = [];
  for (let round = 0; round < rounds; round++) {
    runs.direct.push((await run(UPSTREAM, true, bytes)).times);
    runs.relay.push((await run([...RELAY, ...UPSTREAM], true, bytes)).times);
    runs.store.push((await run([...STORE, ...UPSTREAM], true, bytes)).times);
    bridgedRuns.push(await run([...BRIDGE, ...UPSTREAM], false, bytes));
  }
  const direct = medians(runs.direct);
  const relay = medians(runs.relay);
  const store = medians(runs.store);
  const bridged = medians(bridgedRuns.map((r) => r.times));
  const ms = (t: number[]) => t.map((x) => x.toFixed(0)).join(" / ");
  const ratio = (a: number[], b: number[]) => a.map((t, i) => (t / b[i]!).toFixed(2)).join(" / ");
  out(
    `${mib} MiB tool result (1st / 2nd / 3rd in one process, a fast upstream; ` +
      `medians of ${rounds} rounds in turn):`,
  );
  out(`  direct  ${ms(direct)} ms`);
  out(`  relay   ${ms(relay)} ms (copies bytes as they come)`);
  out(`  store   ${ms(store)} ms (copies each line once it is whole: the floor of the spec)`);
  out(`  bridged ${ms(bridged)} ms`);
  out(`  bridged/relay ${ratio(bridged, relay)} (target <= 1.3)`);
  out(`  bridged/store ${ratio(bridged, store)} (what the bridge adds to the floor of the spec)`);
  const target = (2.5 * bytes / 1024 / 1024 + 60).toFixed(0);
  const peaks = medians(bridgedRuns.map((r) => r.peaks));
  const rss = medians(bridgedRuns.map((r) => [r.rss]))[0]!;
  out(
    `  bridge peak RSS ${peaks.map((p) => p.toFixed(0)).join(" / ")} MB after each ` +
      `(target <= ${target} MB), RSS at the end ${rss.toFixed(0)} MB`,
  );
}

if (import.meta.main) {
  await benchLarge((line) => Deno.stdout.writeSync(enc.encode(line + "\n")));
}
