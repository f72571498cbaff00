/**
 * The benchmark of a realistic remote upstream: a lean MCP server
 * (`tests/fixtures/http2_echo_server.ts`: canned answers, so that the
 * server's CPU on the same two cores does not set the figures) over TLS,
 * behind a TCP proxy on loopback that adds 10 ms each way (a round trip of
 * 20 ms). The same small tools/call from a direct client (fetch with the
 * test CA), the bridge and mcp-remote 0.15.1, each through a proxy of its
 * own that counts the TCP connections it opened. Two servers:
 *
 * - **HTTP/2** (node:http2, HTTP/2 offered, HTTP/1.1 allowed). The bridge
 *   calls `echo`, a tool without hints, whose body goes as a stream that
 *   fetch never sends twice, and `peek`, the same tool marked read-only
 *   (after a tools/list, as VS Code sends one first): a repeatable call,
 *   whose body goes as bytes. Targets (issues 21, 36): p50 <= direct +
 *   2 ms; throughput >= 0.9 x direct and >= 1.5 x mcp-remote; no new
 *   handshake after idle; at most 2 connections.
 * - **HTTP/1.1 only** (node:https, Node.js's keep-alive time of 5 s), as
 *   most servers that are not behind a proxy. Targets (issue 36): p50 <=
 *   direct + 2 ms; throughput >= 0.9 x direct; the connections of a run of
 *   64 calls in flight <= 64.
 *
 * Figures: p50 of sequential calls, throughput at 64 in flight, the
 * connections that one run at 64 in flight opened (the most of the
 * rounds), the latency of one call after 6 s idle, and the connections in
 * all.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { makeCertificates } from "../tests/fixtures/http_tls.ts";
import {
  BridgedClient,
  type Client,
  DirectClient,
  ECHO,
  mcpRemote,
  throughput,
} from "./bench_http.ts";

/** The read-only tool of the echo server: a repeatable call. */
const PEEK = { name: "peek", arguments: { text: "x" } };
import { bridgeCommand } from "./bridge_command.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
/** Each way: a round trip of twice this. */
const DELAY_MS = 10;
const IDLE_MS = 6000;
/** Rounds in turn of the direct client and the bridge; the figures are their medians. */
const ROUNDS = 5;

/** A child that prints one line (a port) first; the rest of its stdout is read by `last`. */
class LineChild {
  readonly child: Deno.ChildProcess;
  readonly #lines: AsyncIterator<string>;

  constructor(args: string[]) {
    this.child = new Deno.Command(deno, {
      args,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#lines = this.child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TransformStream<string, string>({
        transform(chunk, controller) {
          for (const line of chunk.split("\n")) if (line.trim()) controller.enqueue(line.trim());
        },
      }),
    )[Symbol.asyncIterator]();
  }

  async line(): Promise<string> {
    const { value, done } = await this.#lines.next();
    if (done) throw new Error("the child ended early");
    return value;
  }

  /** Writes one line to its stdin; its next line. */
  async ask(): Promise<string> {
    const writer = this.child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("\n"));
    writer.releaseLock();
    return await this.line();
  }

  /** Ends its stdin; its last line. */
  async stop(): Promise<string> {
    await this.child.stdin.close();
    const last = await this.line().catch(() => "");
    await this.child.status;
    return last;
  }
}

/** A delaying proxy in front of the server: its URL and its child. */
async function proxyTo(serverPort: number): Promise<{ url: string; proxy: LineChild }> {
  const proxy = new LineChild([
    "run",
    "--allow-net=127.0.0.1",
    `${root}tests/fixtures/delay_proxy.ts`,
    String(serverPort),
    String(DELAY_MS),
  ]);
  return { url: `https://127.0.0.1:${await proxy.line()}/mcp`, proxy };
}

/** A tools/call's params. */
type Call = Record<string, unknown>;

async function median(client: Client, n: number, call: Call = ECHO): Promise<number> {
  for (let i = 0; i < 5; i++) await client.request("tools/call", call);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", call);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

/** One call after {@linkcode IDLE_MS} of idle: its latency, and the new connections it opened. */
async function afterIdle(
  client: Client,
  proxy: LineChild,
  call: Call = ECHO,
): Promise<{ ms: number; opened: number }> {
  const before = Number(await proxy.ask());
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const t0 = performance.now();
  await client.request("tools/call", call);
  const ms = performance.now() - t0;
  return { ms, opened: Number(await proxy.ask()) - before };
}

interface Figures {
  p50: number;
  throughput: number;
  /** The most connections that one run at 64 in flight opened. */
  burst: number;
  idle: number;
  /** The connections that the call after idle opened (0: no new handshake). */
  idleOpened: number;
  connections: number;
}

/** One client of a part, through a proxy of its own, and the call it makes. */
interface Contender {
  readonly client: Client;
  readonly proxy: LineChild;
  readonly call: Record<string, unknown>;
  readonly rounds: { p50: number; throughput: number; burst: number }[];
}

/** One round of a contender: p50, then a run at 64 in flight with the connections it opened. */
async function round(c: Contender, calls: number): Promise<void> {
  const p50 = await median(c.client, 40, c.call);
  const before = Number(await c.proxy.ask());
  const tput = await throughput(c.client, 64, calls, c.call);
  c.rounds.push({ p50, throughput: tput, burst: Number(await c.proxy.ask()) - before });
}

/** The median figures of a contender's rounds, with its idle call and its connections. */
async function figuresOf(c: Contender): Promise<Figures> {
  const mid = (values: number[]) => values.sort((x, y) => x - y)[values.length >> 1]!;
  const idle = await afterIdle(c.client, c.proxy, c.call);
  return {
    p50: mid(c.rounds.map((r) => r.p50)),
    throughput: mid(c.rounds.map((r) => r.throughput)),
    burst: Math.max(...c.rounds.map((r) => r.burst)),
    idle: idle.ms,
    idleOpened: idle.opened,
    connections: 0,
  };
}

/** What a part measures: its server, and the lines of its targets from the figures. */
interface Part {
  readonly title: string;
  /** The extra argument of the echo server (`h1`: HTTP/1.1 only). */
  readonly serverArgs: string[];
  /** The bridge also calls the read-only tool `peek` (a repeatable call). */
  readonly peek: boolean;
  readonly targets: (f: Record<string, Figures | string>, out: (line: string) => void) => void;
}

const fmt = (n: number, d = 1) => n.toFixed(d);
const verdict = (ok: boolean) => ok ? "met" : "MISSED";

/** Runs one part and prints its lines. */
async function runPart(
  part: Part,
  certDir: string,
  caFile: string,
  out: (line: string) => void,
): Promise<void> {
  // A server of its own for each part: the node:http2 of Deno (nghttp2) can abort on an
  // assertion when a client's session goes away, which would stop the next part.
  const servers: LineChild[] = [];
  const startServer = async () => {
    const server = new LineChild([
      "run",
      "-A",
      `${root}tests/fixtures/http2_echo_server.ts`,
      `${certDir}/server.pem`,
      `${certDir}/server.key`,
      ...part.serverArgs,
    ]);
    servers.push(server);
    return Number(await server.line());
  };
  const figures: Record<string, Figures | string> = {};
  try {
    // The direct client (fetch with the test CA: HTTP/2 by ALPN, or HTTP/1.1 kept alive) and
    // the bridge, each through a proxy of its own, measured in rounds in turn: the machine
    // drifts, and both the server and the proxies share its two cores with the clients.
    const serverPort = await startServer();
    const direct = await proxyTo(serverPort);
    const http = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(caFile)] });
    const directClient = new DirectClient(direct.url, http);
    await directClient.request("server/discover", {});
    const contenders: [string, Contender][] = [
      ["direct", { client: directClient, proxy: direct.proxy, call: ECHO, rounds: [] }],
    ];
    const bridges: BridgedClient[] = [];
    for (const call of part.peek ? [ECHO, PEEK] : [ECHO]) {
      const { url, proxy } = await proxyTo(serverPort);
      const bridged = new BridgedClient(bridgeCommand("--ca-file", caFile, url));
      await bridged.start();
      // As VS Code: the tools are listed first (the hints of `peek`).
      await bridged.request("tools/list", {});
      bridges.push(bridged);
      contenders.push([
        call === PEEK ? "bridge peek" : "bridge",
        { client: bridged, proxy, call, rounds: [] },
      ]);
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const [, contender] of contenders) await round(contender, 2560);
    }
    for (const [name, contender] of contenders) figures[name] = await figuresOf(contender);
    http.close();
    for (const bridged of bridges) await bridged.stop();
    for (const [name, contender] of contenders) {
      (figures[name] as Figures).connections = Number(await contender.proxy.stop());
    }
    // mcp-remote 0.15.1 (Node.js; the CA through NODE_EXTRA_CA_CERTS).
    const found = await mcpRemote(out);
    if (typeof found === "string") figures["mcp-remote"] = found;
    else {
      const { url, proxy } = await proxyTo(await startServer());
      const remote = new BridgedClient([found.bin, url], {
        ...Deno.env.toObject(),
        NODE_EXTRA_CA_CERTS: caFile,
      });
      await remote.start();
      const contender: Contender = { client: remote, proxy, call: ECHO, rounds: [] };
      await round(contender, 1280);
      figures["mcp-remote"] = await figuresOf(contender);
      await remote.stop();
      (figures["mcp-remote"] as Figures).connections = Number(await proxy.stop());
    }
  } finally {
    for (const server of servers) await server.stop().catch(() => "");
  }
  out(`\nRealistic remote (${part.title}, ${2 * DELAY_MS} ms round trip added by a proxy)`);
  for (const [name, f] of Object.entries(figures)) {
    if (typeof f === "string") {
      out(`${name.padEnd(11)} not measured (${f})`);
      continue;
    }
    out(
      `${name.padEnd(11)} p50 ${fmt(f.p50)} ms, 64 in flight ${fmt(f.throughput, 0)} req/s ` +
        `(${f.burst} new connection(s) in a run), after ${IDLE_MS / 1000} s idle ` +
        `${
          fmt(f.idle)
        } ms (${f.idleOpened} new connection(s)), ${f.connections} TCP connection(s) in all`,
    );
  }
  part.targets(figures, out);
}

/** The line of the target of both parts: the p50 of the bridge within 2 ms of direct. */
function p50Target(d: Figures, b: Figures): string {
  return `targets     p50 <= direct + 2 ms: ${verdict(b.p50 <= d.p50 + 2)} (+${
    fmt(b.p50 - d.p50, 2)
  } ms)`;
}

/** The targets of the HTTP/2 part. */
function http2Targets(figures: Record<string, Figures | string>, out: (line: string) => void) {
  const d = figures.direct as Figures;
  const b = figures.bridge as Figures;
  const p = figures["bridge peek"] as Figures;
  const r = figures["mcp-remote"] ?? "not measured";
  out(p50Target(d, b));
  out(
    `            throughput >= 0.9 x direct: ${verdict(b.throughput >= 0.9 * d.throughput)} (${
      fmt(b.throughput / d.throughput, 2)
    } x; a read-only tool: ${fmt(p.throughput / d.throughput, 2)} x)` +
      (typeof r === "string"
        ? ""
        : `; >= 1.5 x mcp-remote: ${verdict(b.throughput >= 1.5 * r.throughput)} (${
          fmt(b.throughput / r.throughput, 2)
        } x)`),
  );
  out(
    `            after idle no new handshake: ${verdict(b.idleOpened === 0)} (${
      fmt(b.idle)
    } ms, direct ${fmt(d.idle)} ms); connections <= 2: ${verdict(b.connections <= 2)}`,
  );
}

/** The targets of the HTTP/1.1 part. */
function http1Targets(figures: Record<string, Figures | string>, out: (line: string) => void) {
  const d = figures.direct as Figures;
  const b = figures.bridge as Figures;
  out(p50Target(d, b));
  out(
    `            throughput >= 0.9 x direct: ${verdict(b.throughput >= 0.9 * d.throughput)} (${
      fmt(b.throughput / d.throughput, 2)
    } x); connections of a run of 64 in flight <= 64: ${verdict(b.burst <= 64)} (${b.burst})`,
  );
}

/** Runs the remote benchmark (HTTP/2, then HTTP/1.1 only) and prints its lines with `out`. */
export async function benchRemote(out: (line: string) => void): Promise<void> {
  const certs = await makeCertificates();
  await Deno.writeTextFile(`${certs.dir}/server.pem`, certs.cert);
  await Deno.writeTextFile(`${certs.dir}/server.key`, certs.key);
  try {
    await runPart(
      { title: "TLS, HTTP/2 offered", serverArgs: [], peek: true, targets: http2Targets },
      certs.dir,
      certs.caFile,
      out,
    );
    await runPart(
      { title: "TLS, HTTP/1.1 only", serverArgs: ["h1"], peek: false, targets: http1Targets },
      certs.dir,
      certs.caFile,
      out,
    );
  } finally {
    await Deno.remove(certs.dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const enc = new TextEncoder();
  await benchRemote((line) => Deno.stdout.writeSync(enc.encode(line + "\n")));
}
