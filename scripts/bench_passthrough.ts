/**
 * The pass-through in the benchmark (`--protocol auto`, LEGACY.md): a small
 * tools/call (`echo`) of `@modelcontextprotocol/server-everything` (revision
 * 2025-11-25, run by Node.js, pinned in deno.json) directly over stdio,
 * through the plain relay (`./bench_relay.ts`: one more process that copies
 * bytes, the floor) and through the bridge. The same line client for the
 * three (`BridgedClient` of `./bench_http.ts`), measured in turn.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import "@modelcontextprotocol/server-everything/package.json" with { type: "json" };
import { BridgedClient, type Client, throughput } from "./bench_http.ts";
import { bridgeCommand } from "./bridge_command.ts";

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

const ECHO = { name: "echo", arguments: { message: "x" } };

async function p50(client: Client, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", ECHO);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

/** The pass-through figures: p50 and throughput, direct, relay and bridged. */
export async function benchPassthrough(out: (line: string) => void): Promise<void> {
  const clients = {
    direct: new BridgedClient(SERVER),
    relay: new BridgedClient([
      deno,
      "run",
      "--allow-run",
      `${root}scripts/bench_relay.ts`,
      ...SERVER,
    ]),
    bridged: new BridgedClient(bridgeCommand("--protocol", "auto", "--", ...SERVER)),
  };
  type Name = keyof typeof clients;
  const names = Object.keys(clients) as Name[];
  for (const name of names) await clients[name].start();
  // Rounds in turn, the first one a warm-up; the median of the others.
  const inTurn = async (rounds: number, measure: (c: BridgedClient) => Promise<number>) => {
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
  const rps = await inTurn(4, (c) => throughput(c, 64, 3_000, ECHO));
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
