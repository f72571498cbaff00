/**
 * The bridge in the test's own process, with the interface of the child
 * process of `tests/process/helpers.ts` (`BridgeProcess`): the same command
 * line flags, read by the real parser and wired by the real start-up of
 * `lib/cli/` (`bridgeOptions`: the links, `--protocol auto`), the same
 * messages, the log lines in `stderr`. The upstream is a child on stdio, a
 * URL, or an SDK v2 server of a factory over the memory link (no process).
 *
 * The output is buffered as a pipe's would be, without a bound: a test may
 * end the bridge with messages it did not read, and `stdout` keeps every
 * byte the bridge wrote (for the scans for secrets).
 *
 * Use it wherever the test is about the front end rather than the process:
 * a test costs no `deno` start for the bridge (and none for the upstream over
 * the memory link). What is about the process (exit codes of the command
 * line, stdio framing, signals, permissions) stays in `tests/process/`.
 *
 * @module
 */

import { Frontend } from "../../lib/frontend/frontend.ts";
import type { Clock } from "../../lib/clock.ts";
import { parseCommandLine } from "../../lib/cli/command_line.ts";
import { bridgeOptions } from "../../lib/cli/run.ts";
import { createLogger } from "../../lib/log.ts";
import { connectMemoryLink, type ServerFactory } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";

type Obj = Record<string, unknown>;
const enc = new TextEncoder();

/**
 * How long the bridge may take to end after the end of its input (its
 * child's grace included): a bridge that does not end fails the test
 * instead of hanging the run, as the child process got SIGKILL.
 */
const STOP_LIMIT_MS = 15_000;

/**
 * What the in-process bridge can start in front of: the command of a child on
 * stdio, the URL of a server over HTTP (no sign-in: no token store is read),
 * or a factory of SDK v2 servers over the memory link.
 */
export type Upstream = string[] | string | ServerFactory;

/** Options of the in-process bridge that a process cannot have. */
export interface InProcessOptions {
  /** Times the deadlines and the listen stream (the real clock by default). */
  clock?: Clock;
  /**
   * Variables that the command line reads (`--header-env`) on top of this
   * process's environment. Only the parser reads them: the proxy variables of
   * the link are those of this process (the tests set none; the proxy test is
   * a process test).
   */
  env?: Record<string, string>;
}

/** The environment of the command line: `env`, then this process's without the proxies. */
function envOf(env: Record<string, string> = {}): (name: string) => string | undefined {
  return (name) =>
    Object.hasOwn(env, name)
      ? env[name]
      : /^(https?|no|all)_proxy$/i.test(name)
      ? undefined
      : Deno.env.get(name);
}

/** The bridge of `options` (flags of the command line) in front of `upstream`, in this process. */
export class InProcessBridge implements AsyncDisposable {
  readonly frontend: Frontend;
  /** The exit code that `frontend.run` resolves with. */
  readonly exitCode: Promise<number>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  readonly #queue: unknown[] = [];
  readonly #log: string[] = [];
  readonly #stdout: string[] = [];
  readonly #decoder = new TextDecoder();
  #reading: Promise<IteratorResult<string>> | undefined;

  constructor(options: string[], upstream: Upstream, extra: InProcessOptions = {}) {
    const argv = typeof upstream === "string" ? [...options, upstream] : [
      ...options,
      "--",
      ...(typeof upstream === "function" ? ["in-process-upstream"] : upstream),
    ];
    const cli = parseCommandLine(argv, envOf(extra.env));
    if (cli.kind !== "run") throw new Error(`not a command line of the bridge: ${options}`);
    if (typeof upstream === "function" && cli.protocol === "auto") {
      // Its fallback would start the placeholder command: a factory speaks 2026-07-28 only.
      throw new Error("--protocol auto needs an upstream command or URL, not a factory");
    }
    const input = new TransformStream<Uint8Array, Uint8Array>();
    // Every chunk is kept as it is written; no back pressure (a queue without a bound).
    const output = new TransformStream<Uint8Array, Uint8Array>(
      {
        transform: (chunk, controller) => {
          this.#stdout.push(this.#decoder.decode(chunk, { stream: true }));
          controller.enqueue(chunk);
        },
      },
      undefined,
      { highWaterMark: Infinity },
    );
    const wired = bridgeOptions(cli, {
      log: createLogger(VSCODE_PROFILE.name, cli.logLevel, (line) => this.#log.push(line)),
      output: output.writable,
    });
    this.frontend = new Frontend({
      ...wired,
      ...(typeof upstream === "function" && { connect: () => connectMemoryLink(upstream) }),
      ...(extra.clock && { clock: extra.clock }),
    });
    this.exitCode = this.frontend.run(input.readable);
    this.#writer = input.writable.getWriter();
    this.#lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(
      new LineSplitter(),
    )[Symbol.asyncIterator]();
  }

  /** The log lines so far, as the process writes them to stderr. */
  get stderr(): string {
    return this.#log.join("");
  }

  /** Every byte that the bridge wrote to its output so far, as text. */
  get stdout(): string {
    return this.#stdout.join("");
  }

  /** The messages read and not yet taken (read past by `response` or `take`), in order. */
  get queued(): readonly Obj[] {
    return this.#queue as Obj[];
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
    if (this.#queue.length) return this.#queue.shift() as Obj;
    const line = await this.line(ms);
    return line === null ? null : JSON.parse(line);
  }

  /** Reads messages until one has the id; the others are kept in order. */
  async response(id: number | string, ms = 10_000): Promise<Obj> {
    const skipped: unknown[] = [];
    for (;;) {
      const msg = await this.next(ms);
      if (msg === null) throw new Error(`no response for ${id}; the log:\n${this.stderr}`);
      if (msg.id === id && ("result" in msg || "error" in msg)) {
        this.#queue.unshift(...skipped);
        return msg;
      }
      skipped.push(msg);
    }
  }

  /**
   * Waits until a message matches, and takes it; the others stay queued in
   * order. Null at the end of the output or after `ms`.
   */
  async take(match: (msg: Obj) => boolean, ms = 10_000): Promise<Obj | null> {
    const deadline = Date.now() + ms;
    const at = (this.#queue as Obj[]).findIndex(match);
    if (at !== -1) return this.#queue.splice(at, 1)[0] as Obj;
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

  /** initialize, and notifications/initialized only when asked (it opens the listen stream). */
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

  async closeInput(): Promise<void> {
    try {
      await this.#writer.close();
    } catch {
      // already closed
    }
  }

  /** Ends the input and waits for the exit code. */
  async exit(): Promise<number> {
    await this.closeInput();
    return await within(this.exitCode, STOP_LIMIT_MS, "the end of the bridge");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeInput();
    await within(this.exitCode, STOP_LIMIT_MS, "the end of the bridge");
    await this.#lines.return?.();
  }
}
