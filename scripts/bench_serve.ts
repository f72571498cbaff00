/**
 * The benchmark of `serve` (part of `deno task bench`): the memory of one
 * `serve` with 10 client sessions against 10 stdio bridges (what VS Code
 * starts for one server in 10 windows), each with its upstream child; and
 * the latency of a small call over the HTTP face against the stdio face, in
 * front of the same upstream (`tests/fixtures/conformance_upstream.ts`).
 * A benchmark, not a test: nothing here fails on a slow machine.
 *
 * Run alone: `deno run -P=test scripts/bench_serve.ts`
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { BridgedClient, type Client, latency } from "./bench_http.ts";
import { bridgeCommand, serveArgs } from "./bridge_command.ts";
import { memoryOf } from "./proc_memory.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const UPSTREAM = [Deno.execPath(), "run", "-A", `${root}tests/fixtures/conformance_upstream.ts`];
const SESSIONS = 10;
const CALL = { name: "test_simple_text", arguments: {} };

/** A session of `serve` over fetch, as the transport asks (keep-alive connections). */
class ServeClient {
  #id = 1;
  #session = "";
  constructor(readonly url: string) {}

  #post(body: unknown): Promise<Response> {
    return fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(this.#session && { "mcp-session-id": this.#session }),
      },
      body: JSON.stringify(body),
    });
  }

  async start(): Promise<void> {
    const response = await this.#post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    this.#session = response.headers.get("mcp-session-id") ?? "";
    await response.text();
    await (await this.#post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
  }

  /** One request; its whole response body (a JSON body, or the SSE stream until it ends). */
  async request(method: string, params: Record<string, unknown>): Promise<string> {
    return await (await this.#post({ jsonrpc: "2.0", id: this.#id++, method, params })).text();
  }

  async stop(): Promise<void> {
    const response = await fetch(this.url, {
      method: "DELETE",
      headers: { "mcp-session-id": this.#session },
    });
    await response.body?.cancel();
  }
}

/** The pid of the upstream child that answers `client`. */
async function upstreamPid(client: Client): Promise<number> {
  const text = await client.request("tools/call", { name: "pid", arguments: {} });
  return Number(/"text":"(\d+)"/.exec(text)?.[1]);
}

/** The resident and own memory of `pids`, summed, in MiB. */
async function memory(pids: number[]): Promise<{ rss: number; own: number }> {
  let rss = 0;
  let own = 0;
  for (const pid of pids) {
    const m = await memoryOf(pid);
    rss += m?.rss ?? 0;
    own += m?.own ?? 0;
  }
  return { rss: rss / 1024, own: own / 1024 };
}

/** Starts `serve --port 0` in front of the upstream; its process and the URL of /mcp. */
async function startServe(): Promise<{ child: Deno.ChildProcess; url: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveArgs("--port", "0", "--log-level", "info", "--", ...UPSTREAM),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const match = /listening on (http:\/\/\S+) \((\/mcp)\)/.exec(text);
    if (match) {
      // The rest of its stderr goes nowhere (it is read, so it never blocks serve).
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })();
      return { child, url: `${match[1]}${match[2]}` };
    }
    const { done, value } = await reader.read();
    if (done) throw new Error(`serve did not start:\n${text}`);
    text += value;
  }
}

/** The figures of `serve` against stdio bridges, as lines for `out`. */
export async function benchServe(out: (line: string) => void): Promise<void> {
  const fmt = (n: number, d = 1) => n.toFixed(d);
  out(`\nserve: one process for ${SESSIONS} sessions, against ${SESSIONS} stdio bridges`);
  // 10 stdio bridges, each with its own upstream child (10 windows of VS Code).
  const bridges = Array.from(
    { length: SESSIONS },
    () => new BridgedClient(bridgeCommand("--", ...UPSTREAM)),
  );
  await Promise.all(bridges.map((b) => b.start()));
  const bridgeUpstreams = await Promise.all(bridges.map(upstreamPid));
  // One serve with 10 sessions on one upstream child.
  const serve = await startServe();
  const sessions = Array.from({ length: SESSIONS }, () => new ServeClient(serve.url));
  for (const session of sessions) await session.start();
  const serveUpstreams = new Set(await Promise.all(sessions.map(upstreamPid)));
  // Settle: the collector and the lazy modules of both sides.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const stdio = await memory(bridges.map((b) => b.child.pid));
  const stdioUp = await memory(bridgeUpstreams);
  const http = await memory([serve.child.pid]);
  const httpUp = await memory([...serveUpstreams]);
  out(
    `  ${SESSIONS} stdio bridges: ${fmt(stdio.rss)} MiB RSS (${fmt(stdio.rss / SESSIONS)} each; ` +
      `own ${fmt(stdio.own)} MiB), + ${bridgeUpstreams.length} upstream children ${
        fmt(stdioUp.rss)
      } MiB = ${fmt(stdio.rss + stdioUp.rss)} MiB`,
  );
  out(
    `  one serve, ${SESSIONS} sessions: ${fmt(http.rss)} MiB RSS (own ${fmt(http.own)} MiB), + ` +
      `${serveUpstreams.size} upstream child ${fmt(httpUp.rss)} MiB = ${
        fmt(http.rss + httpUp.rss)
      } MiB; bridges alone ${fmt(http.rss / stdio.rss, 2)} of the stdio bridges' RSS`,
  );
  // Latency of a small tools/call, in turn on both faces, the median of 5 rounds.
  const rounds = {
    stdio: [] as { p50: number; p99: number }[],
    http: [] as { p50: number; p99: number }[],
  };
  for (let round = 0; round < 5; round++) {
    rounds.stdio.push(await latency(bridges[0]!, 500, CALL));
    rounds.http.push(await latency(sessions[0]!, 500, CALL));
  }
  const median = (values: { p50: number; p99: number }[]) =>
    values.sort((a, b) => a.p50 - b.p50)[values.length >> 1]!;
  const [ls, lh] = [median(rounds.stdio), median(rounds.http)];
  out(`  small tools/call latency (median of 5 rounds in turn, 500 calls each, same upstream):`);
  out(`    stdio face p50 ${fmt(ls.p50, 3)} ms p99 ${fmt(ls.p99, 2)} ms`);
  out(
    `    HTTP face  p50 ${fmt(lh.p50, 3)} ms p99 ${fmt(lh.p99, 2)} ms (POST, SSE response, ` +
      `keep-alive); HTTP/stdio p50 ${fmt(lh.p50 / ls.p50, 2)}`,
  );
  for (const session of sessions) await session.stop();
  serve.child.kill("SIGTERM");
  await serve.child.status;
  await Promise.all(bridges.map((b) => b.stop()));
}

if (import.meta.main) {
  await benchServe((line) => Deno.stdout.writeSync(new TextEncoder().encode(line + "\n")));
}
