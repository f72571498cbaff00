/**
 * The command lines of every subcommand, parsed with the options of the one
 * table of flags (`flags.ts`): the bridge (and `doctor`, which takes the
 * same), `login URL` and `logout URL`. A command line that is not valid is
 * a {@linkcode UsageError} whose message is one line that names an option,
 * a variable or a file, never a value or the URL (exit 2).
 *
 * @module
 */

import { type Limits, parseLimitFlags } from "../settings/limits.ts";
import { isLogLevel, type LogLevel } from "../log.ts";
import { isProtocol, type Protocol } from "../legacy/protocol.ts";
import {
  CaFileError,
  isUrlArgument,
  parseRemote,
  RemoteArgumentError,
  type RemoteTarget,
} from "../upstream/http_options.ts";
import {
  AuthOptionError,
  type AuthSettings,
  authSettingsOf,
  StoreOpenError,
} from "../auth/options.ts";
import type { LoginCommand } from "../auth/login.ts";
import type { LogoutCommand } from "../auth/logout.ts";
import { globProblem, ToolFilter } from "../translate/tool_filter.ts";
import { flagNames, optionsOf } from "./flags.ts";
import { OptionError, parseOptions } from "./usage.ts";

/** What the command line of the bridge (or of `doctor`) asks for. */
export type Command =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | {
    readonly kind: "run";
    readonly command: string;
    readonly args: readonly string[];
    readonly name: string;
    readonly logLevel: LogLevel;
    readonly limits: Limits;
    /** `--protocol`: 2026-07-28, or auto (an older upstream gets the pass-through). */
    readonly protocol: Protocol;
    /** An upstream server at a URL (then `command` is empty). */
    readonly remote?: RemoteTarget;
    /** The sign-in options of a URL upstream. */
    readonly auth?: AuthSettings;
    /** `--tool` and `--ignore-tool`, when either is given. */
    readonly tools?: ToolFilter;
  };

/** The command line of a bridge that runs (not `--help` or `--version`). */
export type RunCommand = Extract<Command, { readonly kind: "run" }>;

/** A command line that is not valid; the message is one line. */
export class UsageError extends Error {
  override name = "UsageError";
  /** False for a file that cannot be used (a token store, `--ca-file`): no pointer to `--help`. */
  readonly pointer: boolean;

  constructor(message: string, pointer = true) {
    super(message);
    this.pointer = pointer;
  }
}

/** Reads the environment (tests pass their own). */
type Env = (name: string) => string | undefined;
const ENV: Env = (name) => Deno.env.get(name);

/** An option error of the sign-in or of the URL as a usage error. */
function asUsage<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof OptionError) throw new UsageError(error.message);
    if (error instanceof AuthOptionError || error instanceof RemoteArgumentError) {
      throw new UsageError(
        error.message,
        !(error instanceof StoreOpenError || error instanceof CaFileError),
      );
    }
    throw error;
  }
}

/**
 * Parses the arguments of the bridge (without the program name), or of
 * `doctor` (without the word).
 *
 * @example
 * ```ts
 * import { parseCommandLine } from "./command_line.ts";
 * const cli = parseCommandLine(["--request-timeout", "5", "--", "node", "server.js"]);
 * if (cli.kind !== "run" || cli.name !== "node" || cli.limits.list_timeout_ms !== 5000) {
 *   throw new Error();
 * }
 * ```
 */
export function parseCommandLine(argv: readonly string[], env: Env = ENV): Command {
  const split = argv.indexOf("--");
  const optionArgs = split === -1 ? argv : argv.slice(0, split);
  const options = optionsOf("bridge");
  const parsed = asUsage(() =>
    parseOptions(
      optionArgs,
      options,
      split === -1 || "an argument before -- is not valid: give a URL or -- COMMAND, not both",
    )
  );
  const values: Record<string, string | boolean | string[] | undefined> = parsed.values;
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  const commandLine = split === -1 ? parsed.positionals : argv.slice(split + 1);
  const remote = remoteOf(split === -1 ? parsed.positionals : [], values, env);
  const [command, ...args] = remote ? [""] : commandLine;
  const auth = asUsage(() => authSettingsOf(values, remote));
  if (!remote && (command === undefined || command === "")) {
    throw new UsageError("the upstream COMMAND is missing");
  }
  const logLevel = values["log-level"] ?? "info";
  if (typeof logLevel !== "string" || !isLogLevel(logLevel)) {
    throw new UsageError("--log-level needs error, warn, info or debug");
  }
  const protocol = values.protocol ?? "2026-07-28";
  if (typeof protocol !== "string" || !isProtocol(protocol)) {
    throw new UsageError("--protocol needs 2026-07-28 or auto");
  }
  const name = values.name;
  if (typeof name === "string" && name.trim() === "") throw new UsageError("--name needs a name");
  const limits = parseLimitFlags(values);
  if (!limits.ok) throw new UsageError(limits.message);
  const tools = toolFilterOf(values);
  return {
    kind: "run",
    command: command!,
    args,
    ...(remote && { remote }),
    ...(auth && { auth }),
    name: typeof name === "string" ? name : (remote ? remote.url.hostname : fileStem(command!)),
    logLevel,
    limits: limits.limits,
    protocol,
    ...(tools && { tools }),
  };
}

/** The filter of `--tool` and `--ignore-tool`; an empty glob is a usage error. */
function toolFilterOf(values: Record<string, unknown>): ToolFilter | undefined {
  const lists: Record<"tool" | "ignore-tool", string[]> = { "tool": [], "ignore-tool": [] };
  for (const flag of ["tool", "ignore-tool"] as const) {
    const given = values[flag];
    for (const glob of Array.isArray(given) ? given : []) {
      const problem = globProblem(String(glob));
      if (problem) throw new UsageError(`--${flag} ${problem}`);
      lists[flag].push(String(glob));
    }
  }
  return ToolFilter.of({ tools: lists.tool, ignoreTools: lists["ignore-tool"] });
}

/**
 * The URL upstream of the command line: one positional that is a URL, with
 * the HTTP flags. HTTP flags without a URL are not valid.
 */
function remoteOf(
  positionals: readonly string[],
  values: Record<string, unknown>,
  env: Env,
): RemoteTarget | undefined {
  const [first, ...rest] = positionals;
  if (first === undefined || !isUrlArgument(first)) {
    const flag = flagNames("http").find((name) => values[name] !== undefined);
    if (flag) throw new UsageError(`--${flag} needs an upstream server at a URL`);
    return undefined;
  }
  if (rest.length > 0) throw new UsageError("a URL upstream takes no arguments after the URL");
  return asUsage(() => parseRemote(first, values, { env }));
}

/** The values and positionals of a subcommand's arguments, with the options of its flags. */
function parseSubcommand(command: "login" | "logout", argv: readonly string[]): {
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
} {
  return asUsage(() => parseOptions(argv, optionsOf(command), true));
}

/**
 * The file name of a command without its extension, as `basename(path,
 * extname(path))` of `node:path` gives it: `/usr/bin/my-server.js` is
 * `my-server`; a name that starts with its only dot (`.server`) keeps it.
 */
export function fileStem(path: string): string {
  const separators = Deno.build.os === "windows" ? /[\\/]+$/ : /\/+$/;
  const trimmed = path.replace(separators, "");
  const at = Math.max(
    trimmed.lastIndexOf("/"),
    Deno.build.os === "windows" ? trimmed.lastIndexOf("\\") : -1,
  );
  const base = trimmed.slice(at + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(0, dot) : base;
}

/**
 * Parses the arguments after `login`: the URL, the sign-in options and the
 * HTTP flags of the bridge, so that the login signs in as the bridge will.
 */
export function parseLogin(argv: readonly string[], env: Env = ENV): LoginCommand {
  const { positionals: [url, ...rest], values } = parseSubcommand("login", argv);
  if (url === undefined || !URL.canParse(url)) {
    throw new UsageError("login needs the URL of the server");
  }
  if (rest.length > 0) throw new UsageError("login takes one URL");
  const remote = asUsage(() => parseRemote(url, values, { env }));
  const auth = asUsage(() => authSettingsOf(values, remote));
  if (auth === undefined) {
    throw new UsageError(
      "login does not go with an Authorization header of --header-env: the bridge does not sign in then",
    );
  }
  return { remote, auth };
}

/**
 * Parses the arguments after `logout`.
 */
export function parseLogout(argv: readonly string[]): LogoutCommand {
  const { positionals: [url, ...rest], values } = parseSubcommand("logout", argv);
  if (url === undefined) throw new UsageError("logout needs the URL of the server");
  if (rest.length > 0) throw new UsageError("logout takes one URL");
  if (!URL.canParse(url)) throw new UsageError("logout needs the URL of the server");
  const store = values["token-store"];
  return {
    url: new URL(url).href,
    ...(typeof store === "string" && { tokenStore: store }),
  };
}
