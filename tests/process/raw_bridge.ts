/**
 * The real program over pipes, with its output as raw lines: for the tests
 * that must see the exact bytes (ids) or must stop reading (back pressure).
 */

import { strictEqual } from "node:assert/strict";
import { DENO, ROOT } from "./helpers.ts";

const enc = new TextEncoder();

/** The bridge as a child process, with raw lines of its stdout; it can stop reading. */
export class RawBridge implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = "";
  #lines: string[] = [];
  #read: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(upstream: string[], options: string[] = []) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "-q", "-P", `${ROOT}main.ts`, ...options, "--", ...upstream],
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

  /** The next line of the bridge's output: null at its end; an error after `ms`. */
  async line(ms = 20_000): Promise<string | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), ms));
    try {
      while (this.#lines.length === 0) {
        // A read that lost the race is kept for the next call: no bytes are lost.
        this.#read ??= this.#reader.read();
        const next = await Promise.race([this.#read, late]);
        if (next === "late") throw new Error(`no line in ${ms} ms; stderr:\n${this.stderr}`);
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

  async message(): Promise<Record<string, unknown>> {
    const line = await this.line();
    if (line === null) throw new Error(`the output ended; stderr:\n${this.stderr}`);
    return JSON.parse(line);
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
    strictEqual((await this.message()).id, "init");
    if (initialized) await this.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
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
