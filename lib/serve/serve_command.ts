/**
 * The command line of `serve`: its own options (the address, the security,
 * the bounds of the sessions), and the upstream servers, each with the
 * options of a stdio bridge of today: one on the command line
 * (`serve [options] -- COMMAND` or `serve [options] URL`, at `/mcp`), or
 * several from `--config FILE` (each at `/NAME/mcp`). A command line that is
 * not valid is a usage error (exit 2) whose reason names an option, a file
 * or a server's name, never a value.
 *
 * @module
 */

import { optionsOf } from "../cli/flags.ts";
import {
  type Command,
  parseCommandLine,
  type RunCommand,
  UsageError,
} from "../cli/command_line.ts";
import { OptionError, parseOptions } from "../cli/usage.ts";
import { isLogLevel, type LogLevel } from "../log.ts";
import { DEFAULT_LIMITS, limitFlagMessage, limitValue } from "../settings/limits.ts";
import { isReplicaName } from "./session_id.ts";
import { isLoopbackBind } from "./guard.ts";

/** One upstream server of `serve` and the path of its MCP endpoint. */
export interface ServedUpstream {
  /** Its name in the config file; none for the one upstream of the command line. */
  readonly name?: string;
  /** `/mcp`, or `/NAME/mcp`. */
  readonly path: string;
  /** Its options and upstream, as a stdio bridge's command line gives them. */
  readonly cli: RunCommand;
}

/** What `serve` runs. */
export interface ServeCommand {
  readonly kind: "serve";
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** The origins of `--allow-origin`, as `URL.origin` writes them. */
  readonly allowedOrigins: readonly string[];
  /** The token of `--token-env` (never logged), and the variable's name. */
  readonly token?: { readonly variable: string; readonly value: string };
  readonly replica?: string;
  readonly maxSessions: number;
  readonly sessionIdleMs: number;
  readonly upstreamGraceMs: number;
  /** How long SIGTERM waits for the requests in flight. */
  readonly shutdownGraceMs: number;
  /** The level of the process's own lines. */
  readonly logLevel: LogLevel;
  readonly upstreams: readonly ServedUpstream[];
}

/** The defaults of the options of `serve`. */
export const SERVE_DEFAULTS = Object.freeze({
  host: "127.0.0.1",
  port: 8770,
  maxSessions: 64,
  sessionIdleMs: 900_000,
  upstreamGraceMs: 30_000,
});

/** The options that only `serve` takes: they are not passed on to the bridge's parser. */
const OWN = [
  "port",
  "host",
  "config",
  "token-env",
  "allow-origin",
  "replica",
  "max-sessions",
  "session-idle",
  "upstream-grace",
];

/** What a name in the config file may be: it is a segment of the path. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Reads the environment and files (tests pass their own). */
export interface ServeEnv {
  readonly env: (name: string) => string | undefined;
  readonly readFile?: (path: string) => string;
}

/** `argv` without the options of `names` (and their values), before `--`. */
function without(argv: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let at = 0; at < argv.length; at++) {
    const arg = argv[at]!;
    if (arg === "--") {
      out.push(...argv.slice(at));
      break;
    }
    const name = arg.startsWith("--") ? arg.slice(2).split("=")[0]! : "";
    if (!names.includes(name)) {
      out.push(arg);
      continue;
    }
    // Every option of serve takes a value: `--name=VALUE` or `--name VALUE`.
    if (!arg.includes("=")) at++;
  }
  return out;
}

function seconds(flag: string, text: unknown, zero: boolean, fallback: number): number {
  if (text === undefined) return fallback;
  const value = typeof text === "string" ? limitValue({ unit: "seconds", zero }, text) : undefined;
  if (value === undefined) {
    throw new UsageError(limitFlagMessage({ flag: `--${flag}`, unit: "seconds", zero }));
  }
  return value;
}

/**
 * Parses the arguments after `serve`. `--help` gives `{kind: "help"}`.
 *
 * @example
 * ```ts
 * import { parseServeCommandLine } from "./serve_command.ts";
 * const cli = parseServeCommandLine(["--port", "0", "--", "node", "server.js"], { env: () => undefined });
 * if (cli.kind !== "serve" || cli.port !== 0 || cli.upstreams[0]?.path !== "/mcp") throw new Error();
 * ```
 */
export function parseServeCommandLine(
  argv: readonly string[],
  io: ServeEnv,
): ServeCommand | Extract<Command, { kind: "help" | "version" }> {
  const split = argv.indexOf("--");
  let parsed;
  try {
    parsed = parseOptions(split === -1 ? argv : argv.slice(0, split), optionsOf("serve"), true);
  } catch (error) {
    if (error instanceof OptionError) throw new UsageError(error.message);
    throw error;
  }
  const values = parsed.values;
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  const host = typeof values.host === "string" ? values.host : SERVE_DEFAULTS.host;
  if (host.trim() === "") throw new UsageError("--host needs an address");
  const port = values.port === undefined ? SERVE_DEFAULTS.port : Number(values.port);
  if (!/^\d{1,5}$/.test(String(values.port ?? "0")) || !(port >= 0 && port <= 65535)) {
    throw new UsageError("--port needs a port number from 0 to 65535");
  }
  const token = tokenOf(values["token-env"], io);
  if (!token && !isLoopbackBind(host)) {
    throw new UsageError(
      "--host with an address that is not loopback needs --token-env: every client must then send the token",
    );
  }
  const replica = values.replica;
  if (replica !== undefined && (typeof replica !== "string" || !isReplicaName(replica))) {
    throw new UsageError("--replica needs 1 to 32 letters and digits");
  }
  const maxSessions = values["max-sessions"] === undefined
    ? SERVE_DEFAULTS.maxSessions
    : limitValue({ unit: "count", zero: false }, String(values["max-sessions"]));
  if (maxSessions === undefined) {
    throw new UsageError("--max-sessions needs a whole number above 0");
  }
  const logLevel = values["log-level"] ?? "info";
  if (typeof logLevel !== "string" || !isLogLevel(logLevel)) {
    throw new UsageError("--log-level needs error, warn, info or debug");
  }
  const upstreams = typeof values.config === "string"
    ? configUpstreams(values.config, argv, values, io)
    : [{ path: "/mcp", cli: bridgeCommand(without(argv, OWN), io) }];
  return {
    kind: "serve",
    host,
    port,
    allowedOrigins: originsOf(values["allow-origin"]),
    ...(token && { token }),
    ...(typeof replica === "string" && { replica }),
    maxSessions,
    sessionIdleMs: seconds(
      "session-idle",
      values["session-idle"],
      false,
      SERVE_DEFAULTS.sessionIdleMs,
    ),
    upstreamGraceMs: seconds(
      "upstream-grace",
      values["upstream-grace"],
      true,
      SERVE_DEFAULTS.upstreamGraceMs,
    ),
    shutdownGraceMs: seconds(
      "shutdown-grace",
      values["shutdown-grace"],
      true,
      DEFAULT_LIMITS.shutdown_grace_ms,
    ),
    logLevel,
    upstreams,
  };
}

function tokenOf(variable: unknown, io: ServeEnv): ServeCommand["token"] {
  if (variable === undefined) return undefined;
  if (typeof variable !== "string" || variable === "") {
    throw new UsageError("--token-env needs a variable");
  }
  const value = io.env(variable)?.trim();
  if (value === undefined || value === "") {
    throw new UsageError(`--token-env: the environment variable ${variable} is not set`);
  }
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new UsageError(
      `--token-env: the environment variable ${variable} is not a valid bearer token`,
    );
  }
  return { variable, value };
}

function originsOf(given: unknown): string[] {
  const out: string[] = [];
  for (const text of Array.isArray(given) ? given : []) {
    let origin: string;
    try {
      origin = new URL(String(text)).origin;
    } catch {
      throw new UsageError("--allow-origin needs an origin such as https://app.example.com");
    }
    if (origin === "null") throw new UsageError("--allow-origin needs an http or https origin");
    out.push(origin);
  }
  return out;
}

/** The command line of one bridge, which must run a bridge (not --help). */
function bridgeCommand(argv: readonly string[], io: ServeEnv, where = ""): RunCommand {
  let cli: Command;
  try {
    cli = parseCommandLine(argv, io.env);
  } catch (error) {
    if (error instanceof UsageError && where !== "") {
      throw new UsageError(`${where}: ${error.message}`, error.pointer);
    }
    throw error;
  }
  if (cli.kind !== "run") {
    throw new UsageError(`${where || "serve"}: --help and --version stand alone`);
  }
  return cli;
}

/** The upstreams of `--config FILE`. */
function configUpstreams(
  path: string,
  argv: readonly string[],
  values: Record<string, unknown>,
  io: ServeEnv,
): ServedUpstream[] {
  const bridgeOnly = Object.keys(values).filter((name) =>
    !OWN.includes(name) && name !== "log-level" && name !== "shutdown-grace"
  );
  if (bridgeOnly.length > 0 || argv.includes("--") || (argv.length > 0 && hasPositional(argv))) {
    throw new UsageError(
      `--config: the options and the upstream of each server go into the file${
        bridgeOnly[0] ? ` (--${bridgeOnly[0]})` : ""
      }`,
    );
  }
  let text: string;
  try {
    text = (io.readFile ?? Deno.readTextFileSync)(path);
  } catch {
    throw new UsageError(`--config: cannot read the file ${path}`, false);
  }
  let servers: unknown;
  try {
    servers = (JSON.parse(text) as { servers?: unknown }).servers;
  } catch {
    throw new UsageError(`--config: the file ${path} is not valid JSON`, false);
  }
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new UsageError(`--config: the file ${path} needs an object "servers"`, false);
  }
  const entries = Object.entries(servers as Record<string, unknown>);
  if (entries.length === 0) {
    throw new UsageError(`--config: the file ${path} names no server`, false);
  }
  return entries.map(([name, entry]) => {
    if (!SERVER_NAME.test(name)) {
      throw new UsageError(
        `--config: a server name must be 1 to 64 letters, digits, dots, hyphens and underscores`,
        false,
      );
    }
    const args = (entry as { args?: unknown } | null)?.args;
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) {
      throw new UsageError(
        `--config: the server "${name}" needs "args", an array of strings`,
        false,
      );
    }
    return {
      name,
      path: `/${name}/mcp`,
      cli: bridgeCommand(args, io, `--config: the server "${name}"`),
    };
  });
}

/** True when the options of `argv` leave a positional argument (an upstream URL or command). */
function hasPositional(argv: readonly string[]): boolean {
  return parseOptions(argv, optionsOf("serve"), true).positionals.length > 0;
}
