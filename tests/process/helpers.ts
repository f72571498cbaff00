/**
 * Runs the real program over pipes: `deno run -P main.ts`, so the permission
 * set of deno.json is the one under test.
 */

import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DENO = Deno.execPath();
export const MODERN_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/modern_server.ts`];
export const RAW_SERVER = (
  mode = "ok",
): string[] => [DENO, "run", "-A", `${ROOT}tests/fixtures/raw_server.ts`, mode];

const enc = new TextEncoder();

/** The transport of the v1 SDK client (as VS Code runs it) to the real bridge in front of `upstream`. */
export function bridgeTransport(upstream: string[], options: string[] = []): StdioClientTransport {
  return new StdioClientTransport({
    command: DENO,
    args: ["run", "-q", "-P", `${ROOT}main.ts`, ...options, "--", ...upstream],
    cwd: ROOT,
    stderr: "pipe",
  });
}

/** The bridge as a child process, with line access to its stdout. */
export class BridgeProcess implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  readonly #queue: unknown[] = [];
  stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(options: string[], upstream: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "-q", "-P", `${ROOT}main.ts`, ...options, "--", ...upstream],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#lines = this.child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new LineSplitter(),
    )[
      Symbol.asyncIterator
    ]();
    const stderr = this.child.stderr;
    this.#stderrDone = (async () => {
      for await (const text of stderr.pipeThrough(new TextDecoderStream())) this.stderr += text;
    })();
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

  /** The next message of the bridge, or null at the end of its output or after `ms`. */
  async next(ms = 10_000): Promise<Record<string, unknown> | null> {
    if (this.#queue.length) return this.#queue.shift() as Record<string, unknown>;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
    const next = await Promise.race([this.#lines.next(), timeout]);
    clearTimeout(timer);
    if (next === "timeout") return null;
    if (next.done) return null;
    return JSON.parse(next.value);
  }

  /** Reads messages until one has the id; the others are kept in order. */
  async response(id: number | string, ms = 10_000): Promise<Record<string, unknown>> {
    const skipped: unknown[] = [];
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

  /** Every message until the output ends. */
  async rest(ms = 10_000): Promise<Record<string, unknown>[]> {
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
  async initialize(
    capabilities: unknown = {},
    initialized = false,
  ): Promise<Record<string, unknown>> {
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

  /** Closes stdin and waits for the exit code. */
  async exit(): Promise<number> {
    await this.closeInput();
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
    await this.#lines.return?.();
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
