/**
 * The benchmark of a realistic remote upstream: a lean MCP server
 * (`tests/fixtures/http2_echo_server.ts`: canned answers, so that the
 * server's CPU on the same two cores does not set the figures) over TLS on
 * node:http2 (HTTP/2 offered, HTTP/1.1 allowed), behind a TCP proxy on
 * loopback that adds 10 ms each way (a round trip of 20 ms). The
 * same small tools/call from a direct client (fetch with the test CA), the
 * bridge and mcp-remote 0.15.1, each through a proxy of its own that counts
 * the TCP connections it opened.
 *
 * Figures: p50 of sequential calls, throughput at 64 in flight, the
 * latency of one call after 6 s idle, and the connections. Targets (issue
 * 21): p50 <= direct + 2 ms; throughput >= 0.9 x direct and >= 1.5 x
 * mcp-remote; no new handshake after idle; at most 2 connections.
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

async function median(client: Client, n: number): Promise<number> {
  for (let i = 0; i < 5; i++) await client.request("tools/call", ECHO);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.request("tools/call", ECHO);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

/** One call after {@linkcode IDLE_MS} of idle: its latency, and the new connections it opened. */
async function afterIdle(
  client: Client,
  proxy: LineChild,
): Promise<{ ms: number; opened: number }> {
  const before = Number(await proxy.ask());
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const t0 = performance.now();
  await client.request("tools/call", ECHO);
  const ms = performance.now() - t0;
  return { ms, opened: Number(await proxy.ask()) - before };
}

interface Figures {
  p50: number;
  throughput: number;
  idle: number;
  /** The connections that the call after idle opened (0: no new handshake). */
  idleOpened: number;
  connections: number;
}

/** Runs the remote benchmark and prints its lines with `out`. */
export async function benchRemote(out: (line: string) => void): Promise<void> {
  const fmt = (n: number, d = 1) => n.toFixed(d);
  const certs = await makeCertificates();
  await Deno.writeTextFile(`${certs.dir}/server.pem`, certs.cert);
  await Deno.writeTextFile(`${certs.dir}/server.key`, certs.key);
  // A server of its own for each part: the node:http2 of Deno (nghttp2) can abort on an
  // assertion when a client's session goes away, which would stop the next part.
  const servers: LineChild[] = [];
  const startServer = async () => {
    const server = new LineChild([
      "run",
      "-A",
      `${root}tests/fixtures/http2_echo_server.ts`,
      `${certs.dir}/server.pem`,
      `${certs.dir}/server.key`,
    ]);
    servers.push(server);
    return Number(await server.line());
  };
  const figures: Record<string, Figures | string> = {};
  try {
    // The direct client (fetch with the test CA, HTTP/2 by ALPN) and the bridge, each through
    // a proxy of its own, measured in rounds in turn: the machine drifts, and both the server
    // and the proxies share its two cores with the clients.
    {
      const serverPort = await startServer();
      const direct = await proxyTo(serverPort);
      const http = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(certs.caFile)] });
      const directClient = new DirectClient(direct.url, http);
      await directClient.request("server/discover", {});
      const bridge = await proxyTo(serverPort);
      const bridged = new BridgedClient(bridgeCommand("--ca-file", certs.caFile, bridge.url));
      await bridged.start();
      const rounds: [number, number][] = [];
      const tputs: [number, number][] = [];
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push([await median(directClient, 40), await median(bridged, 40)]);
        tputs.push([
          await throughput(directClient, 64, 2560),
          await throughput(bridged, 64, 2560),
        ]);
      }
      const mid = (values: number[]) => values.sort((x, y) => x - y)[values.length >> 1]!;
      const directIdle = await afterIdle(directClient, direct.proxy);
      const bridgeIdle = await afterIdle(bridged, bridge.proxy);
      http.close();
      await bridged.stop();
      figures.direct = {
        p50: mid(rounds.map((r) => r[0])),
        throughput: mid(tputs.map((t) => t[0])),
        idle: directIdle.ms,
        idleOpened: directIdle.opened,
        connections: Number(await direct.proxy.stop()),
      };
      figures.bridge = {
        p50: mid(rounds.map((r) => r[1])),
        throughput: mid(tputs.map((t) => t[1])),
        idle: bridgeIdle.ms,
        idleOpened: bridgeIdle.opened,
        connections: Number(await bridge.proxy.stop()),
      };
    }
    // mcp-remote 0.15.1 (Node.js; the CA through NODE_EXTRA_CA_CERTS).
    const found = await mcpRemote(out);
    if (typeof found === "string") figures["mcp-remote"] = found;
    else {
      const { url, proxy } = await proxyTo(await startServer());
      const remote = new BridgedClient([found.bin, url], {
        ...Deno.env.toObject(),
        NODE_EXTRA_CA_CERTS: certs.caFile,
      });
      await remote.start();
      const p50 = await median(remote, 60);
      const tput = await throughput(remote, 64, 1280);
      const idle = await afterIdle(remote, proxy);
      await remote.stop();
      figures["mcp-remote"] = {
        p50,
        throughput: tput,
        idle: idle.ms,
        idleOpened: idle.opened,
        connections: Number(await proxy.stop()),
      };
    }
  } finally {
    for (const server of servers) await server.stop().catch(() => "");
    await Deno.remove(certs.dir, { recursive: true }).catch(() => {});
  }
  out(
    `\nRealistic remote (TLS, HTTP/2 offered, ${2 * DELAY_MS} ms round trip added by a proxy)`,
  );
  for (const [name, f] of Object.entries(figures)) {
    if (typeof f === "string") {
      out(`${name.padEnd(11)} not measured (${f})`);
      continue;
    }
    out(
      `${name.padEnd(11)} p50 ${fmt(f.p50)} ms, 64 in flight ${fmt(f.throughput, 0)} req/s, ` +
        `after ${IDLE_MS / 1000} s idle ${fmt(f.idle)} ms (${f.idleOpened} new connection(s)), ` +
        `${f.connections} TCP connection(s) in all`,
    );
  }
  const d = figures.direct as Figures;
  const b = figures.bridge as Figures;
  const r = figures["mcp-remote"];
  const verdict = (ok: boolean) => ok ? "met" : "MISSED";
  out(
    `targets     p50 <= direct + 2 ms: ${verdict(b.p50 <= d.p50 + 2)} (+${
      fmt(b.p50 - d.p50, 2)
    } ms)`,
  );
  out(
    `            throughput >= 0.9 x direct: ${verdict(b.throughput >= 0.9 * d.throughput)} (${
      fmt(b.throughput / d.throughput, 2)
    } x)` +
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

if (import.meta.main) {
  const enc = new TextEncoder();
  await benchRemote((line) => Deno.stdout.writeSync(enc.encode(line + "\n")));
}
