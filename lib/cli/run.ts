/**
 * The start of the program: the subcommand of the command line, and the
 * sign-in of a URL upstream. `main.ts` only calls {@linkcode runCli}. Each
 * mode loads only what it runs (`import()`): `--version` or `--help` alone
 * loads no parser (`node:util`) and no part of the bridge; a command line is
 * parsed by `command_line.ts`; the bridge loads its wiring (`bridge.ts`: the
 * link, the front end on stdin and stdout, the signals), the sign-in only
 * for a URL that signs in; `login`, `logout` and `doctor` their own code. A
 * part that cannot load is an internal error (exit 1), as any other.
 *
 * @module
 */

import { createLogger, labeledLogger, redirectConsoleToStderr } from "../log.ts";
import { LOG_FLUSH_MS, stderrSink } from "../log_sink.ts";
import type { ByteInput, ByteWriter } from "../jsonrpc/byte_io.ts";
import type { TokenSource } from "../http/token_source.ts";
import { VERSION } from "../version.ts";
import { VSCODE_PROFILE } from "../vscode/profile.ts";
import type { Command, RunCommand } from "./command_line.ts";

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
  /**
   * Writes a log line or the pointer to `--help`; a closed stderr is no
   * error, and a stderr that nobody reads never blocks.
   */
  readonly stderr: (text: string) => void;
  /** Waits (within a bound) until what `stderr` took is written: before the exit. */
  readonly flush?: () => Promise<void>;
  /**
   * Reads a variable of the environment: the command lines of the bridge and
   * of `login` read it; `login`, `logout` and `doctor` themselves, and the
   * sign-in, still read the process's environment.
   */
  readonly env: (name: string) => string | undefined;
  /** Opens the pipes of the protocol, when a command line starts the bridge. */
  readonly stdio: () => Stdio | Promise<Stdio>;
}

/** The pipes of the protocol: the client's messages in, ours out. */
export interface Stdio {
  readonly input: ByteInput;
  readonly output: ByteWriter;
}

/** The stdout, stderr and environment of the process. */
export const PROCESS_IO: CliIo = {
  stdout: async (text) => {
    await Deno.stdout.write(enc.encode(text));
  },
  stderr: (text) => stderrSink().write(text),
  flush: async () => void await stderrSink().flush(LOG_FLUSH_MS),
  env: (name) => Deno.env.get(name),
  // Deno's own reader and writer: a node:net socket on the descriptors would
  // save a thread hand-off per read and write, but loading node:net costs
  // about 40 ms of start and 4 to 9 MiB of RSS (`deno task bench:start`).
  stdio: () => ({ input: Deno.stdin, output: Deno.stdout }),
};

/** The parser of the command line and its errors: every mode but `--version` or `--help` alone. */
async function commandLine() {
  const [parser, auth, usage, http] = await Promise.all([
    import("./command_line.ts"),
    import("../auth/options.ts"),
    import("./usage.ts"),
    import("../upstream/http_options.ts"),
  ]);
  /** A usage error or a sign-in option error (a store that does not open): exit 2. */
  const usageFailure = (error: unknown, io: CliIo): number | undefined => {
    if (!(error instanceof parser.UsageError || error instanceof auth.AuthOptionError)) {
      return undefined;
    }
    createLogger(PROFILE.name, "error", io.stderr).error(error.message);
    // The pointer to --help only for an error of the arguments (not a token store or a --ca-file).
    const pointer = error instanceof parser.UsageError
      ? error.pointer
      : !(error instanceof auth.StoreOpenError || error instanceof http.CaFileError);
    if (pointer) io.stderr(usage.HELP_POINTER);
    return 2;
  };
  return { ...parser, ...auth, usageFailure };
}

/** Runs `fn`; a usage error or a sign-in option error (a store that does not open) is exit 2. */
async function orUsage(
  fn: (cl: Awaited<ReturnType<typeof commandLine>>) => Promise<number>,
  io: CliIo,
): Promise<number> {
  const cl = await commandLine();
  try {
    return await fn(cl);
  } catch (error) {
    const code = cl.usageFailure(error, io);
    if (code !== undefined) return code;
    throw error;
  }
}

/** `login URL ...`: a sign-in from a terminal. */
function login(argv: readonly string[], io: CliIo): Promise<number> {
  return orUsage(async ({ parseLogin }) => {
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
  return orUsage(async ({ parseLogout }) => {
    const command = parseLogout(argv);
    const { runLogout } = await import("../auth/logout.ts");
    return await runLogout(command, createLogger(PROFILE.name, "info", io.stderr));
  }, io);
}

/** The text of `--help` or `--version` on stdout; exit 0. */
async function helpOrVersion(kind: "help" | "version", io: CliIo): Promise<number> {
  await io.stdout(
    kind === "help" ? (await import("./help.ts")).usageText() : `mcp-bridge-vscode ${VERSION}\n`,
  );
  return 0;
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

/**
 * The sign-in of a URL upstream that signs in (`authSettingsOf` gives none
 * for an Authorization header of `--header-env`), and its command line with
 * the time limit of server/discover that a sign-in needs.
 */
async function withSignIn(
  cl: Awaited<ReturnType<typeof commandLine>>,
  cli: RunCommand,
  io: CliIo,
  log = createLogger(PROFILE.name, cli.logLevel, io.stderr),
): Promise<{ cli: RunCommand; tokenSource?: TokenSource }> {
  if (!cli.remote || !cli.auth) return { cli };
  const signIn = await cl.createSignIn(cli.auth, cli.remote.url.href, {
    logger: log,
    name: cl.executableName(),
    env: io.env,
    ...(cli.remote.caCerts && { caCerts: cli.remote.caCerts }),
  });
  const discover = await cl.discoverLimitMs(cli.limits.discover_timeout_ms, signIn, cli.auth);
  return {
    cli: { ...cli, limits: { ...cli.limits, discover_timeout_ms: discover } },
    tokenSource: signIn,
  };
}

/**
 * `serve`: the bridge over Streamable HTTP (`lib/serve/`), with a sign-in for
 * each URL upstream that signs in. Its parts load only for this mode.
 */
async function serveHttp(argv: readonly string[], io: CliIo): Promise<number> {
  const cl = await commandLine();
  const { parseServeCommandLine } = await import("../serve/serve_command.ts");
  const tokenSources = new Map<string, TokenSource>();
  let command;
  try {
    const parsed = parseServeCommandLine(argv, { env: io.env });
    if (parsed.kind !== "serve") return await helpOrVersion(parsed.kind, io);
    const upstreams = [];
    for (const upstream of parsed.upstreams) {
      const base = createLogger(PROFILE.name, upstream.cli.logLevel, io.stderr);
      const log = upstream.name === undefined ? base : labeledLogger(base, upstream.name);
      const { cli, tokenSource } = await withSignIn(cl, upstream.cli, io, log);
      if (tokenSource) tokenSources.set(upstream.path, tokenSource);
      upstreams.push({ ...upstream, cli });
    }
    command = { ...parsed, upstreams };
  } catch (error) {
    const code = cl.usageFailure(error, io);
    if (code !== undefined) return code;
    throw error;
  }
  const { runServe } = await import("../serve/main.ts");
  return await runServe(command, { stderr: io.stderr, tokenSources });
}

/** `doctor serve ...`: the checks of a `serve` command line (it signs in never). */
async function doctorServe(argv: readonly string[], io: CliIo): Promise<number> {
  const cl = await commandLine();
  const { parseServeCommandLine } = await import("../serve/serve_command.ts");
  const args = withoutJson(argv);
  let command;
  try {
    command = parseServeCommandLine(args, { env: io.env });
  } catch (error) {
    const code = cl.usageFailure(error, io);
    if (code !== undefined) return code;
    throw error;
  }
  if (command.kind !== "serve") return await helpOrVersion(command.kind, io);
  const { doctorServe } = await import("../doctor/serve.ts");
  return await doctorServe(command, {
    profile: PROFILE,
    version: VERSION,
    json: jsonFlag(argv),
  });
}

/** The bridge (or `doctor`, which signs in never) with its command line. */
async function serve(
  argv: readonly string[],
  doctor: boolean,
  io: CliIo,
  json = false,
): Promise<number> {
  // `--version` or `--help` alone, as the parser reads them, without the parser.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "--help")) {
    return await helpOrVersion(argv[0] === "--help" ? "help" : "version", io);
  }
  const cl = await commandLine();
  let cli: Command;
  let tokenSource: TokenSource | undefined;
  try {
    cli = cl.parseCommandLine(argv, io.env);
    if (cli.kind === "run" && !doctor) ({ cli, tokenSource } = await withSignIn(cl, cli, io));
  } catch (error) {
    const code = cl.usageFailure(error, io);
    if (code !== undefined) return code;
    throw error;
  }
  if (cli.kind === "help" || cli.kind === "version") return await helpOrVersion(cli.kind, io);
  if (doctor) {
    const { doctorMain } = await import("../doctor/main.ts");
    return await doctorMain(cli, { profile: PROFILE, version: VERSION, json });
  }
  const { runBridge } = await import("./bridge.ts");
  return await runBridge(cli, io, tokenSource);
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
      case "serve":
        return await serveHttp(argv.slice(1), io);
      case "doctor":
        if (argv[1] === "serve") return await doctorServe(argv.slice(2), io);
        return await serve(withoutJson(argv.slice(1)), true, io, jsonFlag(argv.slice(1)));
      default:
        return await serve(argv, false, io);
    }
  } catch (error) {
    createLogger(PROFILE.name, "error", io.stderr).error(
      `internal error: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  } finally {
    // The last lines reach a stderr that is read; one that is not read holds the exit 2 s at most.
    await io.flush?.();
  }
}
