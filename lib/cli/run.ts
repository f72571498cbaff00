/**
 * The start of the program: the subcommand of the command line, and the
 * wiring of the bridge (the sign-in of a URL upstream, the link, the front
 * end on stdin and stdout, the signals). `main.ts` only calls
 * {@linkcode runCli}. `login`, `logout` and `doctor` load their code only
 * when they run.
 *
 * @module
 */

import { Frontend, type FrontendOptions } from "../frontend/frontend.ts";
import { createLogger, type Logger, redirectConsoleToStderr } from "../log.ts";
import { openStdio, type Stdio } from "../jsonrpc/stdio_pipes.ts";
import { legacyConnect } from "../legacy/wiring.ts";
import { CaFileError, connectRemote } from "../upstream/http_options.ts";
import { spawnStdioLink } from "../upstream/stdio.ts";
import type { TokenSource } from "../upstream/token_source.ts";
import {
  AuthOptionError,
  createSignIn,
  discoverLimitMs,
  executableName,
  StoreOpenError,
} from "../auth/options.ts";
import { VERSION } from "../version.ts";
import { VSCODE_PROFILE } from "../vscode/profile.ts";
import {
  type Command,
  parseCommandLine,
  parseLogin,
  parseLogout,
  type RunCommand,
  UsageError,
} from "./command_line.ts";
import { usageText } from "./help.ts";
import { HELP_POINTER } from "./usage.ts";

const enc = new TextEncoder();
const PROFILE = VSCODE_PROFILE;

/**
 * The stdout, stderr, environment and protocol pipes of {@linkcode runCli}:
 * the process's ({@linkcode PROCESS_IO}) in the program; tests pass their
 * own to check the exit code and the exact output of a command line in their
 * own process. `doctor` still writes its report to the process's stdout.
 */
export interface CliIo {
  /** Writes the text of `--help` or `--version`. */
  readonly stdout: (text: string) => Promise<void>;
  /** Writes a log line or the pointer to `--help`; a closed stderr is no error. */
  readonly stderr: (text: string) => void;
  /**
   * Reads a variable of the environment: the command lines of the bridge and
   * of `login` read it; `login`, `logout` and `doctor` themselves, and the
   * sign-in, still read the process's environment.
   */
  readonly env: (name: string) => string | undefined;
  /** Opens the pipes of the protocol, when a command line starts the bridge. */
  readonly stdio: () => Stdio;
}

/** The stdout, stderr and environment of the process. */
export const PROCESS_IO: CliIo = {
  stdout: async (text) => {
    await Deno.stdout.write(enc.encode(text));
  },
  stderr: (text) => {
    try {
      Deno.stderr.writeSync(enc.encode(text));
    } catch {
      // stderr is closed.
    }
  },
  env: (name) => Deno.env.get(name),
  stdio: openStdio,
};

/**
 * A usage error: its reason and, for an error of the arguments (not a token
 * store or a `--ca-file` that cannot be used), the pointer to `--help` on
 * stderr; exit 2.
 */
function usageFailure(error: Error, io: CliIo): number {
  createLogger(PROFILE.name, "error", io.stderr).error(error.message);
  const pointer = error instanceof UsageError
    ? error.pointer
    : !(error instanceof StoreOpenError || error instanceof CaFileError);
  if (pointer) io.stderr(HELP_POINTER);
  return 2;
}

/** Runs `fn`; a usage error or a sign-in option error (a store that does not open) is exit 2. */
async function orUsage(fn: () => Promise<number>, io: CliIo): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UsageError || error instanceof AuthOptionError) {
      return usageFailure(error, io);
    }
    throw error;
  }
}

/** `login URL ...`: a sign-in from a terminal. */
function login(argv: readonly string[], io: CliIo): Promise<number> {
  return orUsage(async () => {
    const command = parseLogin(argv, io.env);
    const { runLogin } = await import("../auth/login.ts");
    // The terminal of login: the redirect address can be pasted on stdin (not the protocol here).
    return await runLogin(command, createLogger(PROFILE.name, "info", io.stderr), undefined, {
      input: () => Deno.stdin.readable,
      write: io.stderr,
    });
  }, io);
}

/** `logout URL ...`: the tokens and the client of a server forgotten (and revoked). */
function logout(argv: readonly string[], io: CliIo): Promise<number> {
  return orUsage(async () => {
    const command = parseLogout(argv);
    const { runLogout } = await import("../auth/logout.ts");
    return await runLogout(command, createLogger(PROFILE.name, "info", io.stderr));
  }, io);
}

/** True when the options of `doctor` (before `--`) hold `--json`. */
function jsonFlag(argv: readonly string[]): boolean {
  const split = argv.indexOf("--");
  return (split === -1 ? argv : argv.slice(0, split)).includes("--json");
}

/** The arguments of `doctor` without its own flag `--json` (before `--`). */
function withoutJson(argv: readonly string[]): readonly string[] {
  const split = argv.indexOf("--");
  const options = split === -1 ? argv : argv.slice(0, split);
  return [...options.filter((arg) => arg !== "--json"), ...(split === -1 ? [] : argv.slice(split))];
}

/** The bridge (or `doctor`, which signs in never) with its command line. */
async function serve(
  argv: readonly string[],
  doctor: boolean,
  io: CliIo,
  json = false,
): Promise<number> {
  let cli: Command;
  let tokenSource: TokenSource | undefined;
  try {
    cli = parseCommandLine(argv, io.env);
    // authSettingsOf gives no sign-in for an Authorization header of --header-env.
    if (cli.kind === "run" && cli.remote && cli.auth && !doctor) {
      const log = createLogger(PROFILE.name, cli.logLevel, io.stderr);
      const signIn = await createSignIn(cli.auth, cli.remote.url.href, {
        logger: log,
        name: executableName(),
        env: io.env,
        ...(cli.remote.caCerts && { caCerts: cli.remote.caCerts }),
      });
      tokenSource = signIn;
      const discover = await discoverLimitMs(cli.limits.discover_timeout_ms, signIn, cli.auth);
      cli = { ...cli, limits: { ...cli.limits, discover_timeout_ms: discover } };
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof AuthOptionError) {
      return usageFailure(error, io);
    }
    throw error;
  }
  if (cli.kind === "help") {
    await io.stdout(usageText());
    return 0;
  }
  if (cli.kind === "version") {
    await io.stdout(`mcp-bridge-vscode ${VERSION}\n`);
    return 0;
  }
  if (doctor) {
    const { doctorMain } = await import("../doctor/main.ts");
    return await doctorMain(cli, { profile: PROFILE, version: VERSION, json });
  }
  const log = createLogger(PROFILE.name, cli.logLevel, io.stderr);
  const stdio = io.stdio();
  const frontend = new Frontend(bridgeOptions(cli, {
    log,
    // Plain reads and writes on the event loop: no web stream stage, no
    // thread hand-off per chunk (jsonrpc/byte_io.ts, jsonrpc/stdio_pipes.ts).
    output: stdio.output,
    ...(tokenSource && { tokenSource }),
  }));
  // SIGTERM and SIGINT end the session as the end of stdin does: the child stops too.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGTERM", "SIGINT"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  try {
    return await frontend.run(stdio.input, stop.signal);
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  }
}

/** What the wiring of {@linkcode bridgeOptions} takes besides the command line. */
export interface BridgeIo {
  readonly log: Logger;
  /** Where the messages for the client go. */
  readonly output: FrontendOptions["output"];
  /** The sign-in of a URL upstream. */
  readonly tokenSource?: TokenSource;
}

/**
 * The options of the front end for the command line `cli`: the profile, the
 * limits, the link to the upstream (a child on stdio, or the HTTP link of a
 * URL) and, with `--protocol auto`, the link of revision 2025-11-25.
 */
export function bridgeOptions(cli: RunCommand, io: BridgeIo): FrontendOptions {
  const { command, args, limits, remote } = cli;
  const { log, tokenSource } = io;
  const spawn = () =>
    spawnStdioLink({
      command,
      args,
      maxLineBytes: limits.max_line_bytes,
      stopGraceMs: limits.child_stop_grace_ms,
    });
  const debug = (message: string) => log.debug(message);
  const warn = (message: string) => log.warn(message);
  return {
    profile: PROFILE,
    limits,
    log,
    fallback: { name: cli.name, version: VERSION },
    connect: remote
      ? connectRemote(remote, { debug, warn, ...(tokenSource && { tokenSource }) })
      : spawn,
    ...(cli.protocol === "auto" && {
      legacy: legacyConnect(remote, spawn, {
        debug,
        warn,
        info: (message) => log.info(message),
        renew: {
          firstMs: limits.listen_backoff_ms,
          maxMs: limits.listen_max_backoff_ms,
          healthyMs: limits.listen_healthy_ms,
          initializeTimeoutMs: limits.discover_timeout_ms,
        },
        ...(tokenSource && { tokenSource }),
      }),
    }),
    output: io.output,
    ...(cli.tools && { tools: cli.tools }),
  };
}

/**
 * Runs the program with its arguments (without the program name); resolves
 * with its exit code. An internal error is one log line and exit 1. `io` is
 * the process's stdout, stderr and environment unless a test gives its own.
 */
export async function runCli(argv: readonly string[], io: CliIo = PROCESS_IO): Promise<number> {
  // SDK code calls console.debug; stdout is the protocol.
  redirectConsoleToStderr();
  try {
    switch (argv[0]) {
      case "login":
        return await login(argv.slice(1), io);
      case "logout":
        return await logout(argv.slice(1), io);
      case "doctor":
        return await serve(withoutJson(argv.slice(1)), true, io, jsonFlag(argv.slice(1)));
      default:
        return await serve(argv, false, io);
    }
  } catch (error) {
    createLogger(PROFILE.name, "error", io.stderr).error(
      `internal error: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
}
