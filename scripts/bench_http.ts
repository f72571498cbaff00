/**
 * The HTTP part of the benchmark: the SDK v2 fixture server over Streamable
 * HTTP on 127.0.0.1 (its own process), a raw HTTP client (fetch, one POST
 * per request) directly, and the line client through the bridge at the URL.
 * Latency p50/p99 and throughput at 64 in flight of a small tools/call, and
 * a 63 MiB result with the bridge's peak RSS.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { bridgeCommand } from "./bridge_command.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const enc = new TextEncoder();

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** The SDK fixture server as a child; its URL. */
async function startServer(): Promise<{ url: string; child: Deno.ChildProcess }> {
  const child = new Deno.Command(deno, {
    args: ["run", "-A", `${root}tests/fixtures/http_sdk_server.ts`, "/mcp", "--lean", "--legacy"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fixture server did not start");
    text += value;
  }
  reader.releaseLock();
  return { url: text.trim(), child };
}

/** A client of the direct path: one POST per request, as the bridge sends it. */
export class DirectClient {
  #id = 1;
  constructor(readonly url: string, readonly client?: Deno.HttpClient) {}

  async request(method: string, params: Record<string, unknown>): Promise<string> {
    const id = this.#id++;
    const response = await fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...(typeof params.name === "string" && { "mcp-name": params.name }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: ENVELOPE } }),
      ...(this.client && { client: this.client }),
    });
    return await response.text();
  }
}

/** A line client through a stdio proxy (the bridge, or mcp-remote), as VS Code talks to it. */
export class BridgedClient {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, (line: string) => void>();
  #id = 1;

  constructor(argv: string[], env?: Record<string, string>) {
    this.child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      ...(env && { env }),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    // The pieces of the current line: a 63 MiB line comes in many chunks,
    // and only each new chunk is searched for its end.
    let pieces: string[] = [];
    for await (const chunk of this.child.stdout) {
      let text = decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = text.indexOf("\n")) !== -1) {
        pieces.push(text.slice(0, nl));
        text = text.slice(nl + 1);
        const line = pieces.join("");
        pieces = [];
        const match = /"id":(\d+)[,}]/.exec(
          line.length > 200 ? line.slice(0, 100) + line.slice(-100) : line,
        );
        if (match) this.#waiting.get(Number(match[1]))?.(line);
      }
      if (text) pieces.push(text);
    }
  }

  request(method: string, params: Record<string, unknown>): Promise<string> {
    const id = this.#id++;
    const done = new Promise<string>((resolve) =>
      this.#waiting.set(id, (line) => {
        this.#waiting.delete(id);
        resolve(line);
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

export type Client = { request(method: string, params: Record<string, unknown>): Promise<string> };
export const ECHO = { name: "echo", arguments: { text: "x" } };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

export async function latency(
  client: Client,
  n: number,
  call: Record<string, unknown> = ECHO,
): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 100; i++) await client.request("tools/call", call);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", call);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/** Calls of `call` (default: the echo of the fixture) per second with `inFlight` at a time. */
export async function throughput(
  client: Client,
  inFlight: number,
  total: number,
  call: Record<string, unknown> = ECHO,
): Promise<number> {
  let sent = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (sent < total) {
      sent++;
      await client.request("tools/call", call);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return total / ((performance.now() - t0) / 1000);
}

function peakRssMb(pid: number): number {
  const status = new TextDecoder().decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).outputSync().stdout,
  );
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** The version of mcp-remote that the goal of the HTTP benchmark names. */
export const MCP_REMOTE_VERSION = "0.15.1";

/**
 * The executable of mcp-remote: `MCP_REMOTE` when set, else an install of
 * mcp-remote@0.15.1 by npm in a folder of the user's cache (outside the
 * project, made once). A string says why there is none.
 */
export async function mcpRemote(out: (line: string) => void): Promise<{ bin: string } | string> {
  const named = Deno.env.get("MCP_REMOTE");
  if (named) return { bin: named };
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`;
  const folder = `${cache}/mcp-bridge-vscode/bench/mcp-remote-${MCP_REMOTE_VERSION}`;
  const bin = `${folder}/node_modules/.bin/mcp-remote`;
  const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
  if (await exists(bin)) return { bin };
  out(`(installing mcp-remote@${MCP_REMOTE_VERSION} with npm into ${folder}, once)`);
  try {
    await Deno.mkdir(folder, { recursive: true });
    const install = await new Deno.Command("npm", {
      args: [
        "install",
        "--prefix",
        folder,
        "--no-audit",
        "--no-fund",
        `mcp-remote@${MCP_REMOTE_VERSION}`,
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    if (install.success && await exists(bin)) return { bin };
    return `npm install mcp-remote@${MCP_REMOTE_VERSION} failed; set MCP_REMOTE to its executable`;
  } catch {
    return "npm is not on the PATH; set MCP_REMOTE to the executable of mcp-remote";
  }
}

/**
 * The same small tools/call through mcp-remote 0.15.1 (npm, run by Node.js),
 * the stdio proxy that VS Code users run for a server at a URL. The upstream
 * serves its 2025-era requests statelessly.
 */
async function compareMcpRemote(
  url: string,
  direct: { p50: number },
  bridgedThroughput: number,
  out: (line: string) => void,
): Promise<void> {
  const fmt = (n: number, d = 2) => n.toFixed(d);
  const found = await mcpRemote(out);
  if (typeof found === "string") {
    out(`mcp-remote                not measured (${found})`);
    return;
  }
  const bin = found.bin;
  const remote = new BridgedClient([bin, url]);
  await remote.start();
  const lr = await latency(remote, 1500);
  const tr = await throughput(remote, 64, 5_000);
  await remote.stop();
  out(
    `mcp-remote                p50 ${fmt(lr.p50)} ms p99 ${fmt(lr.p99)} ms (direct p50 ${
      fmt(direct.p50)
    } ms); 64 in flight ${fmt(tr, 0)} req/s; the bridge is ${
      fmt(bridgedThroughput / tr)
    } times its throughput (target >= 1.4)`,
  );
}

/** Runs the HTTP benchmark and prints its lines with `out`. */
export async function benchHttp(out: (line: string) => void): Promise<void> {
  const fmt = (n: number, d = 2) => n.toFixed(d);
  const server = await startServer();
  try {
    const direct = new DirectClient(server.url);
    await direct.request("server/discover", {});
    const bridged = new BridgedClient(bridgeCommand(server.url));
    await bridged.start();
    // Rounds in turn, so that neither path gets the cold or the warm server;
    // the figures are the medians over the rounds after the first (a warm-up),
    // the ratio the median of each round's own ratio (the machine drifts).
    const rounds: { p50: number; p99: number }[][] = [];
    for (let i = 0; i < 9; i++) {
      rounds.push([await latency(direct, 300), await latency(bridged, 300)]);
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
    const of = (k: 0 | 1, p: "p50" | "p99") => median(rounds.slice(1).map((r) => r[k]![p]));
    const ld = { p50: of(0, "p50"), p99: of(0, "p99") };
    const lb = { p50: of(1, "p50"), p99: of(1, "p99") };
    const ratio = (p: "p50" | "p99") => median(rounds.slice(1).map((r) => r[1]![p] / r[0]![p]));
    out(`\nHTTP upstream on loopback (SDK v2 server over Streamable HTTP on 127.0.0.1, HTTP/1.1)`);
    out(`small tools/call latency  direct p50 ${fmt(ld.p50)} ms p99 ${fmt(ld.p99)} ms`);
    out(`                          bridged p50 ${fmt(lb.p50)} ms p99 ${fmt(lb.p99)} ms`);
    out(
      `                          ratio p50 ${fmt(ratio("p50"))} (information: no target), p99 ${
        fmt(ratio("p99"))
      } (medians of 8 rounds in turn)`,
    );
    const td = await throughput(direct, 64, 5_000);
    const tb = await throughput(bridged, 64, 5_000);
    out(
      `throughput 64 in flight    direct ${fmt(td, 0)} req/s, bridged ${fmt(tb, 0)} req/s, ` +
        `ratio ${fmt(tb / td)}`,
    );
    const bytes = 63 * 1024 * 1024;
    const big = { name: "big", arguments: { bytes } };
    let t0 = performance.now();
    const directText = await direct.request("tools/call", big);
    const directMs = performance.now() - t0;
    t0 = performance.now();
    const bridgedText = await bridged.request("tools/call", big);
    const bridgedMs = performance.now() - t0;
    const ok = directText.length > bytes && bridgedText.length > bytes;
    out(
      `63 MiB tool result        direct ${fmt(directMs, 0)} ms, bridged ${fmt(bridgedMs, 0)} ms, ` +
        `ratio ${fmt(bridgedMs / directMs)}; bridge peak RSS ${
          fmt(peakRssMb(bridged.child.pid), 0)
        } MB${ok ? "" : " (A RESULT WAS MISSING)"}`,
    );
    await bridged.stop();
    await compareMcpRemote(server.url, ld, tb, out);
  } finally {
    await server.child.stdin.close();
    await server.child.status;
  }
}

if (import.meta.main) await benchHttp((line) => Deno.stdout.writeSync(enc.encode(line + "\n")));
