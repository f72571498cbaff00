/**
 * Runs the real program over pipes: the bundle that the release binary
 * carries, as the binary runs it (`program.ts`: no config file, the flags of
 * the `default` permission set of deno.json), with a whole command line, so
 * the permission set is the one under test. Three ways to talk to it:
 * `BridgeProcess` (messages and raw lines; it reads only when the test does,
 * so a test can stop reading), `connectV1` (the v1 SDK client, as VS Code
 * runs it) and `runBridge` (no input: exit code and output). Each gets the
 * environment of `bridgeEnv`.
 */

import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { programArgs } from "./program.ts";

export { programArgs };

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DENO = Deno.execPath();
export const MODERN_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/modern_server.ts`];
export const RAW_SERVER = (
  mode = "ok",
): string[] => [DENO, "run", "-A", `${ROOT}tests/fixtures/raw_server.ts`, mode];

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The initialize request of revision 2025-11-25, id 1, of a client that declares no capabilities. */
export const INITIALIZE_REQUEST = Object.freeze({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
});

/**
 * The config home of the bridges of this test module (a token store of the
 * tests only: a bridge of a test never writes to the user's config). Made at
 * the first bridge and removed when the module ends, so that the modules
 * that import this file for its readers alone leave nothing behind.
 */
let testConfigHome: string | undefined;
function configHome(): string {
  if (testConfigHome === undefined) {
    const dir = Deno.makeTempDirSync({ prefix: "mcp-bridge-test-config-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    testConfigHome = dir;
  }
  return testConfigHome;
}

/**
 * The environment of a bridge: the test's, without proxies, with its own
 * config home, plus `env`. The process gets this one only (`clearEnv`).
 */
export function bridgeEnv(env: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!/^(https?|no|all)_proxy$/i.test(name)) out[name] = value;
  }
  return { ...out, XDG_CONFIG_HOME: configHome(), ...env };
}

/**
 * The v1 SDK client (as VS Code runs it) connected through the real bridge of
 * the command line `argv` (`["--", ...command]` for a child on stdio, or a URL).
 */
export async function connectV1(
  argv: string[],
  env?: Record<string, string>,
  capabilities: Record<string, unknown> = { roots: {} },
): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: DENO,
    args: programArgs(argv),
    cwd: ROOT,
    stderr: "pipe",
    env: bridgeEnv(env),
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr += typeof chunk === "string" ? chunk : dec.decode(chunk);
  });
  const client = new Client({ name: "vscode-like", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/**
 * The program with the command line `argv`, no input, stdout and stderr
 * piped, and only the environment of {@linkcode bridgeEnv}.
 */
export function programCommand(argv: string[], env?: Record<string, string>): Deno.Command {
  return new Deno.Command(DENO, {
    args: programArgs(argv),
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: bridgeEnv(env),
    clearEnv: true,
  });
}

/** How long {@linkcode runBridge} lets a run go before it calls it a hang (a bound, not a figure). */
const RUN_LIMIT_MS = 120_000;

/**
 * Runs the bridge of the command line `argv` with no input; its exit code
 * and output. A run that does not end in {@linkcode RUN_LIMIT_MS} is killed
 * and fails the test with what it wrote: a hang is a defect, not a wait.
 */
export async function runBridge(
  argv: string[],
  env?: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = programCommand(argv, env).spawn();
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill("SIGKILL");
  }, RUN_LIMIT_MS);
  const out = await child.output().finally(() => clearTimeout(timer));
  const result = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  if (hung) {
    throw new Error(
      `the program did not end in ${RUN_LIMIT_MS} ms:\n${result.stdout}${result.stderr}`,
    );
  }
  return result;
}

type Obj = Record<string, unknown>;

/** How long `exit` of `BridgeProcess` waits for each line of the rest of the output. */
const READ_REST_LIMIT_MS = 30_000;

/** The peak resident memory of the process `pid` so far, in MB. */
export function peakRssMb(pid: number): number {
  // Deno asks for all permissions to read /proc directly; cat needs only run.
  const status = dec.decode(
    new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).outputSync().stdout,
  );
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * The messages of a bridge over the lines of its input and output: what the
 * child process (`BridgeProcess`) and the bridge in the test's own process
 * (`InProcessBridge` of tests/frontend/in_process.ts) share.
 */
export abstract class BridgeLines {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  readonly #queue: Obj[] = [];
  #reading: Promise<IteratorResult<string>> | undefined;

  /** `input`: the bridge's input (the test writes); `output`: its output (the test reads). */
  protected constructor(input: WritableStream<Uint8Array>, output: ReadableStream<Uint8Array>) {
    this.#writer = input.getWriter();
    this.#lines = output.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())[
      Symbol.asyncIterator
    ]();
  }

  /** What the bridge logged so far (for the messages of failed waits). */
  abstract get stderr(): string;

  /** The messages read and not yet taken (read past by `response` or `take`), in order. */
  get queued(): readonly Obj[] {
    return this.#queue;
  }

  /** Writes raw text (add the newline yourself). */
  async writeRaw(text: string | Uint8Array): Promise<void> {
    await this.#writer.write(typeof text === "string" ? enc.encode(text) : text);
  }

  async send(message: unknown): Promise<void> {
    await this.writeRaw(JSON.stringify(message) + "\n");
  }

  async request(id: number | string, method: string, params?: unknown): Promise<void> {
    await this.send(
      params === undefined
        ? { jsonrpc: "2.0", id, method }
        : { jsonrpc: "2.0", id, method, params },
    );
  }

  /**
   * The next line of the bridge's output not read yet, as it was written (for
   * the exact bytes of ids), or null at the end of its output or after `ms`.
   * Messages that `response` or `take` read past stay in their queue: do not
   * mix the two ways of reading in one test.
   */
  async line(ms = 10_000): Promise<string | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
    // A read that the timeout beat stays pending for the next call: no line is lost.
    this.#reading ??= this.#lines.next();
    const next = await Promise.race([this.#reading, timeout]);
    clearTimeout(timer);
    if (next === "timeout") return null;
    this.#reading = undefined;
    return next.done ? null : next.value;
  }

  /** The next message of the bridge, or null at the end of its output or after `ms`. */
  async next(ms = 10_000): Promise<Obj | null> {
    if (this.#queue.length) return this.#queue.shift()!;
    const line = await this.line(ms);
    return line === null ? null : JSON.parse(line);
  }

  /** Reads messages until one has the id; the others are kept in order. */
  async response(id: number | string, ms = 10_000): Promise<Obj> {
    const skipped: Obj[] = [];
    for (;;) {
      const msg = await this.next(ms);
      if (msg === null) throw new Error(`no response for ${id}; stderr:\n${this.stderr}`);
      if (msg.id === id && ("result" in msg || "error" in msg)) {
        this.#queue.unshift(...skipped);
        return msg;
      }
      skipped.push(msg);
    }
  }

  /**
   * Every message until the response of `id`, which is the last: what came
   * before it, in order (queued messages first). Throws at the end of the
   * output or after `ms` without a message.
   */
  async until(id: number | string, ms = 10_000): Promise<Obj[]> {
    const out: Obj[] = [];
    for (;;) {
      const msg = await this.next(ms);
      if (msg === null) throw new Error(`no response for ${id}; stderr:\n${this.stderr}`);
      out.push(msg);
      if (msg.id === id && ("result" in msg || "error" in msg)) return out;
    }
  }

  /** Calls the tool `name`, and gives every message until its response (see `until`). */
  async call(id: number | string, name: string, args: Obj = {}): Promise<Obj[]> {
    await this.request(id, "tools/call", { name, arguments: args });
    return await this.until(id);
  }

  /**
   * Waits until a message matches, and takes it; the others stay queued in
   * order. Null at the end of the output or after `ms`.
   */
  async take(match: (msg: Obj) => boolean, ms = 10_000): Promise<Obj | null> {
    const deadline = Date.now() + ms;
    const at = this.#queue.findIndex(match);
    if (at !== -1) return this.#queue.splice(at, 1)[0]!;
    const skipped = this.#queue.splice(0);
    try {
      for (;;) {
        const left = deadline - Date.now();
        const msg = left > 0 ? await this.next(left) : null;
        if (msg === null) return null;
        if (match(msg)) return msg;
        skipped.push(msg);
      }
    } finally {
      this.#queue.unshift(...skipped);
    }
  }

  /** Every message until the output ends. */
  async rest(ms = 10_000): Promise<Obj[]> {
    const out = [];
    for (;;) {
      const msg = await this.next(ms);
      if (msg === null) return out;
      out.push(msg);
    }
  }

  /**
   * initialize, and notifications/initialized only when asked: it opens the
   * listen stream, whose first acknowledgment sends list changes.
   */
  async initialize(capabilities: unknown = {}, initialized = false): Promise<Obj> {
    await this.request("init", "initialize", {
      protocolVersion: "2025-11-25",
      capabilities,
      clientInfo: { name: "raw-test", version: "1" },
    });
    const response = await this.response("init");
    if (initialized) await this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return response;
  }

  /** Reads every message until the end of the output into the queue (see `queued`). */
  protected async readRest(): Promise<void> {
    for (;;) {
      const line = await this.line(READ_REST_LIMIT_MS);
      if (line === null) return;
      this.#queue.push(JSON.parse(line));
    }
  }

  async closeInput(): Promise<void> {
    try {
      await this.#writer.close();
    } catch {
      // already closed
    }
  }

  /** Stops reading the output (at the end of a test). */
  protected async stopReading(): Promise<void> {
    await this.#lines.return?.();
  }
}

/**
 * The bridge of the command line `argv` as a child process, with the
 * environment of `bridgeEnv` plus `env`. It reads its output only when the
 * test does (a test that stops reading fills the pipe, as a client that does
 * not read); `exit` reads the rest, so that `queued` and `stdout` are whole.
 */
export class BridgeProcess extends BridgeLines implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly #stdout: { text: string };
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(argv: string[], env?: Record<string, string>) {
    const child = new Deno.Command(DENO, {
      args: programArgs(argv),
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: bridgeEnv(env),
      clearEnv: true,
    }).spawn();
    const stdout = { text: "" };
    const decoder = new TextDecoder();
    const seen = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        stdout.text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
    });
    super(child.stdin, child.stdout.pipeThrough(seen));
    this.child = child;
    this.#stdout = stdout;
    const stderr = child.stderr;
    this.#stderrDone = (async () => {
      for await (const text of stderr.pipeThrough(new TextDecoderStream())) this.#stderr += text;
    })();
  }

  /** What the process wrote to its stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** What the test read of its stdout so far: every byte, after `exit`. */
  get stdout(): string {
    return this.#stdout.text;
  }

  /** Closes stdin, reads the rest of the output into the queue, and gives the exit code. */
  async exit(): Promise<number> {
    await this.closeInput();
    await this.readRest();
    const status = await this.child.status;
    await this.#stderrDone;
    return status.code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeInput();
    try {
      this.child.kill("SIGKILL");
    } catch {
      // stopped
    }
    await this.child.status;
    await this.#stderrDone;
    await this.stopReading();
  }
}

/** Splits text into lines. */
export class LineSplitter extends TransformStream<string, string> {
  constructor() {
    let buffer = "";
    super({
      transform(chunk, controller) {
        buffer += chunk;
        const parts = buffer.split("\n");
        buffer = parts.pop()!;
        for (const part of parts) if (part.trim()) controller.enqueue(part);
      },
      flush(controller) {
        if (buffer.trim()) controller.enqueue(buffer);
      },
    });
  }
}
