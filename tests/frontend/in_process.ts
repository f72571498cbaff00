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
import { bridgeOptions } from "../../lib/cli/bridge.ts";
import { createLogger } from "../../lib/log.ts";
import type { Limits } from "../../lib/settings/limits.ts";
import { connectMemoryLink, type ServerFactory } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { BridgeLines } from "../process/helpers.ts";
import { within } from "../wait.ts";

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
  /**
   * Limits on top of those of the flags, for the ones that no flag sets (the
   * waits of the listen stream, say) or smaller than a flag can write.
   */
  limits?: Partial<Limits>;
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

/** A bridge started in this process: its streams, its log lines and its end. */
export interface InProcessStart {
  readonly frontend: Frontend;
  /** The bridge's input: the client writes here. */
  readonly input: WritableStream<Uint8Array>;
  /** The bridge's output: the client reads here. It ends when the bridge ends. */
  readonly output: ReadableStream<Uint8Array>;
  /** The log lines so far, as the process writes them to stderr. */
  readonly log: readonly string[];
  /** The exit code that `frontend.run` resolves with. */
  readonly exitCode: Promise<number>;
}

/**
 * Starts the bridge of `options` (flags of the command line) in front of
 * `upstream`, in this process, as `lib/cli/run.ts` wires the program. Its
 * output is queued without a bound (as a pipe that the test reads later), and
 * every chunk goes to `see` as it is written.
 */
export function startInProcess(
  options: string[],
  upstream: Upstream,
  extra: InProcessOptions = {},
  see?: (chunk: Uint8Array) => void,
): InProcessStart {
  const argv = typeof upstream === "string" ? [...options, upstream] : [
    ...options,
    "--",
    ...(typeof upstream === "function" ? ["in-process-upstream"] : upstream),
  ];
  const parsed = parseCommandLine(argv, envOf(extra.env));
  if (parsed.kind !== "run") throw new Error(`not a command line of the bridge: ${options}`);
  const cli = { ...parsed, limits: { ...parsed.limits, ...extra.limits } };
  if (typeof upstream === "function" && cli.protocol === "auto") {
    // Its fallback would start the placeholder command: a factory speaks 2026-07-28 only.
    throw new Error("--protocol auto needs an upstream command or URL, not a factory");
  }
  const log: string[] = [];
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>(
    {
      transform: (chunk, controller) => {
        see?.(chunk);
        controller.enqueue(chunk);
      },
    },
    undefined,
    { highWaterMark: Infinity },
  );
  const wired = bridgeOptions(cli, {
    log: createLogger(VSCODE_PROFILE.name, cli.logLevel, (line) => log.push(line)),
  });
  const frontend = new Frontend({
    ...wired,
    output: output.writable,
    ...(typeof upstream === "function" && { connect: () => connectMemoryLink(upstream) }),
    ...(extra.clock && { clock: extra.clock }),
  });
  const exitCode = frontend.run(input.readable);
  return { frontend, input: input.writable, output: output.readable, log, exitCode };
}

/**
 * The bridge of `options` (flags of the command line) in front of
 * `upstream`, in this process (`startInProcess`), read as messages.
 */
export class InProcessBridge extends BridgeLines implements AsyncDisposable {
  readonly frontend: Frontend;
  /** The exit code that `frontend.run` resolves with. */
  readonly exitCode: Promise<number>;
  readonly #log: readonly string[];
  readonly #stdout: string[];

  constructor(options: string[], upstream: Upstream, extra: InProcessOptions = {}) {
    const stdout: string[] = [];
    const decoder = new TextDecoder();
    // Every chunk is kept as it is written, for the scans for secrets.
    const started = startInProcess(
      options,
      upstream,
      extra,
      (chunk) => stdout.push(decoder.decode(chunk, { stream: true })),
    );
    super(started.input, started.output);
    this.frontend = started.frontend;
    this.exitCode = started.exitCode;
    this.#log = started.log;
    this.#stdout = stdout;
  }

  /** The log lines so far, as the process writes them to stderr. */
  get stderr(): string {
    return this.#log.join("");
  }

  /** The log lines so far, one entry each. */
  get logs(): readonly string[] {
    return this.#log;
  }

  /** Every byte that the bridge wrote to its output so far, as text. */
  get stdout(): string {
    return this.#stdout.join("");
  }

  /** Ends the input and waits for the exit code. */
  async exit(): Promise<number> {
    await this.closeInput();
    return await within(this.exitCode, STOP_LIMIT_MS, "the end of the bridge");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.closeInput();
    await within(this.exitCode, STOP_LIMIT_MS, "the end of the bridge");
    await this.stopReading();
  }
}
