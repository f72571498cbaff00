/**
 * Runs the real `mcp-bridge-vscode serve` (the program under test of
 * `program.ts`: the bundle, as the binary runs it) on a free loopback port, and connects the v1
 * SDK client to it over `StreamableHTTPClientTransport`, as VS Code's
 * `{"type": "http"}` entry does.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { bridgeEnv, DENO, programArgs, programCommand, ROOT } from "./helpers.ts";

/** The upstream fixture of the serve tests (`tests/fixtures/conformance_upstream.ts`). */
export const CONFORMANCE_UPSTREAM = [
  DENO,
  "run",
  "-A",
  `${ROOT}tests/fixtures/conformance_upstream.ts`,
];

const dec = new TextDecoder();

/** A running `serve`: its base URL and its stderr. */
export class ServeProcess implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  /** `http://127.0.0.1:PORT`. */
  readonly base: string;
  readonly port: number;
  #stderr: string;
  readonly #reading: Promise<void>;

  private constructor(child: Deno.ChildProcess, base: string, stderr: string, rest: Promise<void>) {
    this.child = child;
    this.base = base;
    this.port = Number(new URL(base).port);
    this.#stderr = stderr;
    this.#reading = rest;
  }

  /**
   * Starts `serve` with `argv` (after `serve`; `--port 0` is added unless it
   * is there) and waits for its line `listening on ...`. With `fdLimit`, a
   * shell runs it under `ulimit -n fdLimit`.
   */
  static async start(
    argv: string[],
    env?: Record<string, string>,
    fdLimit?: number,
  ): Promise<ServeProcess> {
    const args = argv.includes("--port") ? argv : ["--port", "0", ...argv];
    const child = fdLimit === undefined
      ? programCommand(["serve", ...args], env).spawn()
      : new Deno.Command("sh", {
        args: [
          "-c",
          `ulimit -n ${fdLimit} && exec "$@"`,
          "sh",
          DENO,
          ...programArgs(["serve", ...args]),
        ],
        cwd: ROOT,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        env: bridgeEnv(env),
        clearEnv: true,
      }).spawn();
    void child.stdout.cancel();
    const reader = child.stderr.getReader();
    let text = "";
    let holder: ServeProcess | undefined;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const match = /listening on (http:\/\/\S+) /.exec(text);
      if (match) {
        const rest = (async () => {
          for (;;) {
            const { done, value } = await reader.read().catch(() => ({
              done: true,
              value: undefined,
            }));
            if (done) return;
            holder!.#stderr += dec.decode(value, { stream: true });
          }
        })();
        holder = new ServeProcess(child, match[1]!, text, rest);
        return holder;
      }
      const { done, value } = await reader.read();
      if (done || Date.now() > deadline) {
        const status = await child.status;
        throw new Error(`serve did not listen (exit ${status.code}):\n${text}`);
      }
      text += dec.decode(value, { stream: true });
    }
  }

  /** The URL of an MCP endpoint. */
  url(path = "/mcp"): URL {
    return new URL(path, this.base);
  }

  /** What serve wrote to stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Sends SIGTERM and waits for the exit code (and the rest of stderr). */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<number> {
    try {
      this.child.kill(signal);
    } catch {
      // it exited already
    }
    const status = await this.child.status;
    await this.#reading;
    return status.code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // it exited already
    }
    await this.child.status;
    await this.#reading;
  }
}

/** A v1 SDK client on `url`, connected (initialize and notifications/initialized). */
export async function connectHttp(
  url: URL,
  capabilities: Record<string, unknown> = {},
  name = "vscode-like",
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  return { client, transport };
}

/** Ends a client's session (DELETE) and closes it. */
export async function disconnect(
  connected: { client: Client; transport: StreamableHTTPClientTransport },
): Promise<void> {
  await connected.transport.terminateSession().catch(() => {});
  await connected.client.close();
}

/** The text of the first content block of a tools/call result. */
export function textOf(result: unknown): string {
  return (result as { content: { text?: string }[] }).content[0]?.text ?? "";
}

/** The code and `data.cause` of a request that must fail with an MCP error. */
export async function failure(
  promise: Promise<unknown>,
): Promise<{ code: number; cause: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) {
      const { code, data } = error as { code: number; data?: { cause?: unknown } };
      return { code, cause: data?.cause };
    }
    throw error;
  }
  throw new Error("the request did not fail");
}

/** True while a process runs (`kill -0`: Deno reads /proc only with every permission). */
export function alive(pid: number): boolean {
  return new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" }).outputSync()
    .success;
}
