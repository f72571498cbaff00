/**
 * Back pressure over the real program: a client that does not read, and an
 * upstream server that does not read, stop the bridge from reading instead
 * of filling its memory; nothing is lost or reordered when they read again.
 * The full-size figures (10⁶ messages) are in `deno task bench`; these runs
 * are large enough that an unbounded queue shows.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, ROOT } from "./helpers.ts";

const FLOOD_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/hostile_server.ts`];
/** Peak RSS of the bridge in these runs; an unbounded queue passes it (~110 MB per 100,000). */
const PEAK_LIMIT_MB = 250;
const enc = new TextEncoder();

/** The bridge as a child process, with a raw reader of its stdout that can stop reading. */
class RawBridge implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";
  #lines: string[] = [];
  stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(upstream: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "-q", "-P", `${ROOT}main.ts`, "--", ...upstream],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reader = this.child.stdout.getReader();
    const stderr = this.child.stderr;
    this.#stderrDone = (async () => {
      for await (const text of stderr.pipeThrough(new TextDecoderStream())) this.stderr += text;
    })();
  }

  write(text: string): Promise<void> {
    return this.#writer.write(enc.encode(text));
  }

  /** The next line of the bridge's output (null at its end). */
  async line(): Promise<string | null> {
    while (this.#lines.length === 0) {
      const { done, value } = await this.#reader.read();
      if (done) return null;
      this.#buffer += this.#decoder.decode(value, { stream: true });
      const parts = this.#buffer.split("\n");
      this.#buffer = parts.pop()!;
      this.#lines = parts;
    }
    return this.#lines.shift()!;
  }

  async message(): Promise<Record<string, unknown>> {
    const line = await this.line();
    if (line === null) throw new Error(`the output ended; stderr:\n${this.stderr}`);
    return JSON.parse(line);
  }

  async initialize(): Promise<void> {
    await this.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }) + "\n",
    );
    strictEqual((await this.message()).id, "init");
    await this.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }

  /** The peak resident memory of the bridge so far, in MB. */
  peakMb(): number {
    // Deno asks for all permissions to read /proc directly; cat needs only run.
    const status = new TextDecoder().decode(
      new Deno.Command("cat", { args: [`/proc/${this.child.pid}/status`] }).outputSync().stdout,
    );
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  }

  async exit(): Promise<number> {
    await this.#writer.close();
    for (;;) if (await this.line() === null) break;
    const status = await this.child.status;
    await this.#stderrDone;
    return status.code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#writer.close().catch(() => {});
    try {
      this.child.kill("SIGKILL");
    } catch {
      // stopped
    }
    await this.#reader.cancel().catch(() => {});
    await this.child.status;
    await this.#stderrDone;
  }
}

/** Resolves when `check` holds; polls every 20 ms, fails after `ms`. */
async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

Deno.test("a client that does not read stops the bridge from reading; then all responses come, in order", async () => {
  await using bridge = new RawBridge(FLOOD_SERVER);
  const total = 100_000;
  let accepted = 0;
  const writing = (async () => {
    for (let i = 0; i < total; i += 1000) {
      let text = "";
      for (let j = i; j < i + 1000; j++) text += `{"jsonrpc":"2.0","id":${j},"method":"ping"}\n`;
      await bridge.write(text);
      accepted = i + 1000;
    }
  })();
  // The client does not read: the bridge must stop taking its input (no
  // progress for half a second), long before the last ping.
  let seen = -1;
  let since = Date.now();
  await waitFor(
    () => {
      if (seen !== accepted) [seen, since] = [accepted, Date.now()];
      return Date.now() - since > 500 || accepted === total;
    },
    30_000,
    "the input to stall",
  );
  ok(accepted < total, `the bridge read all ${total} pings while nobody read its output`);
  for (let i = 0; i < total; i++) {
    const line = await bridge.line();
    strictEqual(line, `{"jsonrpc":"2.0","id":${i},"result":{}}`);
  }
  await writing;
  const peak = bridge.peakMb();
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("an upstream server that sends pings without reading stops the bridge from reading it", async () => {
  await using bridge = new RawBridge(FLOOD_SERVER);
  await bridge.initialize();
  const pings = 100_000;
  await bridge.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { pings, stallMs: 300 } },
    }) + "\n",
  );
  const result = await bridge.message();
  // All answers reached the server, in order, and its writes waited for the bridge.
  deepStrictEqual((result.result as Record<string, unknown>).structuredContent, {
    replies: pings,
    inOrder: true,
    stalled: true,
  });
  const peak = bridge.peakMb();
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("log lines of the upstream server wait for a client that does not read; none is lost", async () => {
  await using bridge = new RawBridge(FLOOD_SERVER);
  await bridge.initialize();
  await bridge.write(
    '{"jsonrpc":"2.0","id":"level","method":"logging/setLevel","params":{"level":"info"}}\n',
  );
  strictEqual((await bridge.message()).id, "level");
  const logs = 50_000;
  await bridge.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: { logs, stallMs: 300 } },
    }) + "\n",
  );
  // The client does not read until the server's writes wait.
  await waitFor(() => bridge.stderr.includes("flood: stalled"), 20_000, "the server to stall");
  for (let i = 0; i < logs; i++) {
    const message = await bridge.message();
    deepStrictEqual(message.params, { level: "info", data: `log ${i}` });
  }
  const result = await bridge.message();
  deepStrictEqual((result.result as Record<string, unknown>).structuredContent, {
    replies: 0,
    inOrder: true,
    stalled: true,
  });
  const peak = bridge.peakMb();
  ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB`);
  strictEqual(await bridge.exit(), 0);
});
