/**
 * The pass-through in the benchmark (`--protocol auto`, LEGACY.md): a small
 * tools/call (`echo`) of `@modelcontextprotocol/server-everything` (revision
 * 2025-11-25, run by Node.js, pinned in deno.json) directly over stdio,
 * through the plain relay (`./bench_relay.ts`: one more process that copies
 * bytes, the floor) and through the bridge. The same line client for the
 * three, measured in turn.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import "@modelcontextprotocol/server-everything/package.json" with { type: "json" };

const EVERYTHING = "@modelcontextprotocol/server-everything";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
// The import puts the package into node_modules (nodeModulesDir "auto"); Node.js runs it.
const SERVER = [
  "node",
  `${dirname(fileURLToPath(import.meta.resolve(`${EVERYTHING}/package.json`)))}/dist/index.js`,
  "stdio",
];
const enc = new TextEncoder();

/** A line client of revision 2025-11-25 over a child process. */
class LineClient {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, () => void>();
  #id = 1;

  constructor(argv: string[]) {
    this.child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.child.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const match = /"id":(\d+)[,}]/.exec(line);
        if (match) this.#waiting.get(Number(match[1]))?.();
      }
    }
  }

  request(method: string, params: Record<string, unknown>): Promise<void> {
    const id = this.#id++;
    const done = new Promise<void>((resolve) =>
      this.#waiting.set(id, () => {
        this.#waiting.delete(id);
        resolve();
      })
    );
    this.#writer.write(enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"));
    return done;
  }

  async start(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    });
    await this.#writer.write(
      enc.encode('{"jsonrpc":"2.0","method":"notifications/initialized"}\n'),
    );
  }

  async stop(): Promise<void> {
    await this.#writer.close();
    await this.child.status;
  }
}

const ECHO = { name: "echo", arguments: { message: "x" } };

async function p50(client: LineClient, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", ECHO);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

async function throughput(client: LineClient, inFlight: number, total: number): Promise<number> {
  let sent = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (sent < total) {
      sent++;
      await client.request("tools/call", ECHO);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return total / ((performance.now() - t0) / 1000);
}

/** The pass-through figures: p50 and throughput, direct, relay and bridged. */
export async function benchPassthrough(out: (line: string) => void): Promise<void> {
  const clients = {
    direct: new LineClient(SERVER),
    relay: new LineClient([deno, "run", "--allow-run", `${root}scripts/bench_relay.ts`, ...SERVER]),
    bridged: new LineClient([
      deno,
      ...["run", "-q", "-P", `${root}main.ts`, "--log-level", "error", "--protocol", "auto"],
      "--",
      ...SERVER,
    ]),
  };
  type Name = keyof typeof clients;
  const names = Object.keys(clients) as Name[];
  for (const name of names) await clients[name].start();
  // Rounds in turn, the first one a warm-up; the median of the others.
  const inTurn = async (rounds: number, measure: (c: LineClient) => Promise<number>) => {
    const seen: Record<Name, number[]> = { direct: [], relay: [], bridged: [] };
    for (let round = 0; round < rounds; round++) {
      for (const name of names) seen[name].push(await measure(clients[name]));
    }
    const median = (v: number[]) => v.slice(1).sort((a, b) => a - b)[(v.length - 1) >> 1]!;
    return {
      direct: median(seen.direct),
      relay: median(seen.relay),
      bridged: median(seen.bridged),
    };
  };
  const lat = await inTurn(6, (c) => p50(c, 500));
  const rps = await inTurn(4, (c) => throughput(c, 64, 3_000));
  for (const name of names) await clients[name].stop();
  const f = (n: number, d = 3) => n.toFixed(d);
  out("\npass-through (--protocol auto), server-everything 2026.8.31 over stdio, echo:");
  out(
    `  p50 direct ${f(lat.direct)} ms, relay ${f(lat.relay)} ms, bridged ${f(lat.bridged)} ms; ` +
      `bridged/relay ${f(lat.bridged / lat.relay, 2)} (target <= 1.2)`,
  );
  out(
    `  64 in flight: direct ${f(rps.direct, 0)}, relay ${f(rps.relay, 0)}, bridged ` +
      `${f(rps.bridged, 0)} req/s; bridged/relay ${f(rps.bridged / rps.relay, 2)}`,
  );
}

if (import.meta.main) {
  await benchPassthrough((line) => Deno.stdout.writeSync(enc.encode(line + "\n")));
}
