/**
 * What the tests of the in-process bridge (`in_process.ts`) need besides it:
 * the stderr of an upstream child (the bridge's child inherits the stderr of
 * the test, so it is not in the bridge's log), the console of an upstream
 * server in this process, and the bridge's output as raw lines (exact bytes
 * of ids). The v1 SDK client's transport to it is in `v1_client.ts`.
 *
 * @module
 */

import { Frontend } from "../../lib/frontend/frontend.ts";
import { parseCommandLine } from "../../lib/cli/command_line.ts";
import { bridgeOptions } from "../../lib/cli/run.ts";
import { createLogger } from "../../lib/log.ts";
import { connectMemoryLink, type ServerFactory } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

const enc = new TextEncoder();

/**
 * An upstream command whose stderr goes to a file that the test reads: the
 * command runs under `sh -c 'exec ... 2>>file'`, so it is the same process
 * (`exec`), with the same arguments, signals and exit code.
 */
export class ChildStderr implements Disposable {
  readonly command: string[];
  readonly #file: string;

  constructor(command: string[]) {
    this.#file = Deno.makeTempFileSync({ prefix: "upstream-stderr-" });
    this.command = ["sh", "-c", 'f=$1; shift; exec "$@" 2>>"$f"', "sh", this.#file, ...command];
  }

  /** What the child wrote to its stderr so far. */
  get text(): string {
    try {
      return Deno.readTextFileSync(this.#file);
    } catch {
      return "";
    }
  }

  [Symbol.dispose](): void {
    try {
      Deno.removeSync(this.#file);
    } catch {
      // removed
    }
  }
}

/**
 * The lines of `console.error` while it is held: what an upstream server in
 * this process (the memory link) writes where a child would write its stderr.
 */
export class ConsoleErrors implements Disposable {
  // deno-lint-ignore no-console
  readonly #original = console.error;
  readonly #lines: string[] = [];

  constructor() {
    // deno-lint-ignore no-console
    console.error = (...args: unknown[]) => {
      this.#lines.push(args.map(String).join(" ") + "\n");
    };
  }

  /** The lines so far. */
  get text(): string {
    return this.#lines.join("");
  }

  [Symbol.dispose](): void {
    // deno-lint-ignore no-console
    console.error = this.#original;
  }
}

/**
 * The bridge in this process with its output as raw lines (the bytes it
 * writes, for the exact tokens of ids), in front of a child on stdio or of an
 * SDK v2 server of a factory over the memory link.
 */
export class RawInProcessBridge implements AsyncDisposable {
  readonly exitCode: Promise<number>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #log: string[] = [];
  #buffer = "";
  #lines: string[] = [];
  #read: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;

  constructor(upstream: string[] | ServerFactory, options: string[] = []) {
    const command = typeof upstream === "function" ? ["in-process-upstream"] : upstream;
    const cli = parseCommandLine([...options, "--", ...command]);
    if (cli.kind !== "run") throw new Error(`not a command line of the bridge: ${options}`);
    const input = new TransformStream<Uint8Array, Uint8Array>();
    const output = new TransformStream<Uint8Array, Uint8Array>();
    const frontend = new Frontend({
      ...bridgeOptions(cli, {
        log: createLogger(VSCODE_PROFILE.name, cli.logLevel, (line) => this.#log.push(line)),
        output: output.writable,
      }),
      ...(typeof upstream === "function" && { connect: () => connectMemoryLink(upstream) }),
    });
    this.exitCode = frontend.run(input.readable);
    this.#writer = input.writable.getWriter();
    this.#reader = output.readable.getReader();
  }

  /** The log lines of the bridge so far. */
  get stderr(): string {
    return this.#log.join("");
  }

  write(text: string): Promise<void> {
    return this.#writer.write(enc.encode(text));
  }

  /** The next line of the bridge's output: null at its end; an error after `ms`. */
  async line(ms = 20_000): Promise<string | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), ms));
    try {
      while (this.#lines.length === 0) {
        // A read that lost the race is kept for the next call: no bytes are lost.
        this.#read ??= this.#reader.read();
        const next = await Promise.race([this.#read, late]);
        if (next === "late") throw new Error(`no line in ${ms} ms; the log:\n${this.stderr}`);
        this.#read = undefined;
        if (next.done) return null;
        this.#buffer += this.#decoder.decode(next.value, { stream: true });
        const parts = this.#buffer.split("\n");
        this.#buffer = parts.pop()!;
        this.#lines = parts;
      }
      return this.#lines.shift()!;
    } finally {
      clearTimeout(timer);
    }
  }

  /** initialize; notifications/initialized only when asked (it opens the listen stream). */
  async initialize(initialized = true): Promise<void> {
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
    const line = await this.line();
    if (line === null || JSON.parse(line).id !== "init") throw new Error(`not init: ${line}`);
    if (initialized) await this.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }

  /** Ends the input, reads the output to its end and gives the exit code. */
  async exit(): Promise<number> {
    await this.#writer.close();
    for (;;) if (await this.line() === null) break;
    return await this.exitCode;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#reader.cancel().catch(() => {});
    await this.exitCode;
  }
}
