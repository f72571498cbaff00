/**
 * Back pressure figures of `deno task bench`: the peak RSS of the bridge
 * (VmHWM, garbage included) when a peer does not read.
 *
 * - a client that writes 10⁶ pings without reading, then reads them all;
 * - an upstream server that sends 10⁶ pings without reading its stdin;
 * - 300,000 log lines of the upstream server while the client does not read;
 * - 256 calls of 1 MiB each to an upstream server that stopped reading its stdin.
 *
 * Run alone: `deno run -P=test scripts/bench_pressure.ts [client|pings|logs|frozen]...`.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { bridgeArgs } from "./bridge_command.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const HOSTILE = [deno, "run", "-A", `${root}tests/fixtures/hostile_server.ts`];
const STUBBORN = [deno, "run", "-A", `${root}tests/fixtures/stubborn_server.ts`];
const enc = new TextEncoder();

/** The peak and the current resident memory of a process, in MB. */
function memoryMb(pid: number): { peak: number; now: number } {
  // Deno asks for all permissions to read /proc directly; cat needs only run.
  const status = new TextDecoder().decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).outputSync().stdout,
  );
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { peak: kb("VmHWM") / 1024, now: kb("VmRSS") / 1024 };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The bridge in front of an upstream fixture (the hostile one by default),
 * with a line reader that the caller drives.
 */
class Bridge {
  readonly child: Deno.ChildProcess;
  readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";
  stderr = "";

  constructor(argv: string[] = ["--", ...HOSTILE]) {
    const child = new Deno.Command(deno, {
      args: bridgeArgs(...argv),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.writer = child.stdin.getWriter();
    this.#reader = child.stdout.getReader();
    (async () => {
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.stderr += text;
      }
    })();
  }

  write(text: string): Promise<void> {
    return this.writer.write(enc.encode(text));
  }

  /** Reads lines until `stop` returns true for one; returns how many it read. */
  async readUntil(stop: (line: string, index: number) => boolean): Promise<number> {
    let count = 0;
    for (;;) {
      let nl;
      while ((nl = this.#buffer.indexOf("\n")) !== -1) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (stop(line, count++)) return count;
      }
      const { done, value } = await this.#reader.read();
      if (done) return count;
      this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  async initialize(level?: string): Promise<void> {
    await this.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "b", version: "1" },
        },
      }) + "\n",
    );
    await this.readUntil((line) => line.includes('"id":"init"'));
    if (level) {
      await this.write(
        `{"jsonrpc":"2.0","id":"level","method":"logging/setLevel","params":{"level":"${level}"}}\n`,
      );
      await this.readUntil((line) => line.includes('"id":"level"'));
    }
  }

  memory(): { peak: number; now: number } {
    return memoryMb(this.child.pid);
  }

  async stop(): Promise<void> {
    await this.writer.close().catch(() => {});
    await this.readUntil(() => false);
    await this.child.status;
  }
}

/** Polls until `value()` has not changed for `quietMs`. */
async function untilStill(value: () => number, quietMs: number): Promise<void> {
  let last = value();
  let since = Date.now();
  for (;;) {
    await delay(50);
    const now = value();
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) return;
  }
}

async function stalledClient(total: number): Promise<string> {
  const bridge = new Bridge();
  await bridge.write('{"jsonrpc":"2.0","id":"first","method":"ping"}\n');
  await bridge.readUntil((line) => line.includes('"id":"first"'));
  const base = bridge.memory().now;
  let accepted = 0;
  const writing = (async () => {
    for (let i = 0; i < total; i += 1000) {
      let text = "";
      for (let j = i; j < i + 1000; j++) text += `{"jsonrpc":"2.0","id":${j},"method":"ping"}\n`;
      await bridge.write(text);
      accepted = i + 1000;
    }
  })();
  await untilStill(() => accepted, 1000);
  const stalledAt = accepted;
  const t0 = performance.now();
  let inOrder = true;
  await bridge.readUntil((line, i) => {
    if (line !== `{"jsonrpc":"2.0","id":${i},"result":{}}`) inOrder = false;
    return i === total - 1;
  });
  await writing;
  const drainMs = performance.now() - t0;
  const { peak } = bridge.memory();
  await bridge.stop();
  return `client that does not read, ${total} pings: input stalled after ${stalledAt}; ` +
    `drained in ${drainMs.toFixed(0)} ms, in order: ${inOrder}; bridge peak RSS ${
      peak.toFixed(0)
    } MB (from ${base.toFixed(0)} MB; target < 250 MB)`;
}

async function upstreamFlood(pings: number, logs: number, clientReads: boolean): Promise<string> {
  const bridge = new Bridge();
  await bridge.initialize(logs > 0 ? "info" : undefined);
  const base = bridge.memory().now;
  await bridge.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { pings, logs, stallMs: 300 } },
    }) + "\n",
  );
  if (!clientReads) {
    while (!bridge.stderr.includes("flood: stalled")) await delay(20);
    await untilStill(() => bridge.memory().now, 500);
  }
  let result = "";
  const lines = await bridge.readUntil((line) => {
    if (!line.startsWith('{"jsonrpc":"2.0","id":1,')) return false;
    result = line;
    return true;
  });
  const { peak } = bridge.memory();
  await bridge.stop();
  const content = /"structuredContent":(\{[^}]*\})/.exec(result)?.[1] ?? result.slice(0, 200);
  const what = pings > 0 ? `${pings} pings of the upstream server` : `${logs} log lines`;
  return `${what}${clientReads ? "" : " to a client that does not read"}: ${
    lines - 1
  } lines to the client, server saw ${content}; bridge peak RSS ${peak.toFixed(0)} MB (from ${
    base.toFixed(0)
  } MB)`;
}

/**
 * `calls` calls of `bytes` each to an upstream server that stopped reading
 * its stdin (the stubborn fixture, deafened): what the bridge holds for the
 * pipe, and how many calls it answers at once.
 */
async function frozenUpstream(calls: number, bytes: number): Promise<string> {
  const bridge = new Bridge(["--stop-grace", "0.2", "--", ...STUBBORN]);
  await bridge.initialize();
  await bridge.write(
    '{"jsonrpc":"2.0","id":"deaf","method":"tools/call","params":{"name":"deafen"}}\n',
  );
  await bridge.readUntil((line) => line.includes('"id":"deaf"'));
  const base = bridge.memory().now;
  let answered = 0;
  const reading = bridge.readUntil(() => {
    answered++;
    return false;
  });
  const filler = "x".repeat(bytes);
  for (let id = 0; id < calls; id++) {
    await bridge.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "hang", arguments: { filler } },
      }) + "\n",
    );
  }
  await untilStill(() => bridge.memory().now, 1000);
  const { peak } = bridge.memory();
  const answeredAtOnce = answered;
  await bridge.writer.close();
  await reading;
  await bridge.child.status;
  return `an upstream that does not read its stdin, ${calls} calls of ${
    bytes / (1024 * 1024)
  } MiB: ${answeredAtOnce} answered at once; bridge peak RSS ${peak.toFixed(0)} MB (from ${
    base.toFixed(0)
  } MB)`;
}

/** The figures by name: `deno run -P=test scripts/bench_pressure.ts frozen` runs one. */
const FIGURES: Record<string, () => Promise<string>> = {
  client: () => stalledClient(1_000_000),
  pings: () => upstreamFlood(1_000_000, 0, true),
  logs: () => upstreamFlood(0, 300_000, false),
  frozen: () => frozenUpstream(256, 1024 * 1024),
};

/** The back pressure figures (all, or those named), one line each. */
export async function benchPressure(
  out: (line: string) => void,
  names: readonly string[] = Object.keys(FIGURES),
): Promise<void> {
  out("\nback pressure (peak RSS of the bridge, VmHWM):");
  for (const name of names) {
    const figure = FIGURES[name];
    if (!figure) throw new Error(`no figure ${name}; the figures: ${Object.keys(FIGURES)}`);
    out("  " + await figure());
  }
}

if (import.meta.main) {
  await benchPressure(
    (line) => Deno.stdout.writeSync(enc.encode(line + "\n")),
    Deno.args.length > 0 ? Deno.args : undefined,
  );
}
