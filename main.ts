/**
 * mcp-bridge-vscode: a stdio MCP server of revision 2025-11-25 for VS Code in
 * front of an MCP server of revision 2026-07-28.
 *
 * This file parses the command line and wires the pieces; nothing else.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { basename, extname } from "node:path";
import { Frontend } from "./lib/bridge/frontend.ts";
import {
  limitFlagOptions,
  limitFlagsUsage,
  type Limits,
  parseLimitFlags,
} from "./lib/bridge/limits.ts";
import { createLogger, isLogLevel, type LogLevel, redirectConsoleToStderr } from "./lib/log.ts";
import { spawnStdioLink } from "./lib/upstream/stdio.ts";
import {
  connectRemote,
  HTTP_FLAGS,
  HTTP_USAGE,
  httpFlagsGiven,
  type HttpFlagValues,
  isUrlArgument,
  parseRemote,
  RemoteArgumentError,
  type RemoteTarget,
} from "./lib/upstream/http_options.ts";
import { HELP_POINTER, usageReason } from "./lib/usage.ts";
import { VERSION } from "./lib/version.ts";
import {
  AUTH_OPTIONS,
  AUTH_USAGE,
  AuthOptionError,
  type AuthSettings,
  authSettingsOf,
  createSignIn,
  discoverLimitMs,
  executableName,
} from "./lib/auth/options.ts";
import { VSCODE_PROFILE } from "./lib/vscode/profile.ts";
import { openStdio } from "./lib/jsonrpc/stdio_pipes.ts";
import { isProtocol, type Protocol } from "./lib/legacy/auto.ts";
import { legacyConnect, PROTOCOL_USAGE } from "./lib/legacy/wiring.ts";

/** The usage text of the CLI. */
export const USAGE = `Usage: mcp-bridge-vscode [options] -- COMMAND [ARG...]
       mcp-bridge-vscode [options] URL
       mcp-bridge-vscode doctor [options] (-- COMMAND | URL)

Runs COMMAND, an MCP server of revision 2026-07-28 on stdio (or connects to
the MCP server of revision 2026-07-28 at URL, over Streamable HTTP), and
serves it to VS Code as an MCP server of revision 2025-11-25 on stdin and
stdout. \`doctor\` says in plain words what would break in VS Code (exit 1
when something would).

Options:
  --name NAME                 The server name when the upstream gives none
                              (default: the file name of COMMAND)
${limitFlagsUsage()}${PROTOCOL_USAGE}  --log-level LEVEL           error, warn, info or debug (default: info)
${HTTP_USAGE}  --help                      Show this text
  --version                   Show the version

${AUTH_USAGE}`;

/** What the command line asks for. */
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
  };

/** A command line that is not valid; the message is one line. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parses the arguments of the program (without the program name). */
export function parseCommandLine(argv: readonly string[]): Command {
  const split = argv.indexOf("--");
  const optionArgs = split === -1 ? argv : argv.slice(0, split);
  const options = {
    "name": { type: "string" },
    ...limitFlagOptions(),
    "log-level": { type: "string" },
    "protocol": { type: "string" },
    "help": { type: "boolean" },
    "version": { type: "boolean" },
    ...HTTP_FLAGS,
    ...AUTH_OPTIONS,
  } as const;
  let parsed;
  try {
    parsed = parseArgs({
      args: [...optionArgs],
      allowPositionals: split === -1,
      strict: true,
      options,
    });
  } catch (error) {
    throw new UsageError(
      usageReason(
        error,
        optionArgs,
        options,
        "an argument before -- is not valid: give a URL or -- COMMAND, not both",
      ),
    );
  }
  const { values } = parsed;
  if (values.help) return { kind: "help" };
  if (values.version) return { kind: "version" };
  const commandLine = split === -1 ? parsed.positionals : argv.slice(split + 1);
  const remote = remoteOf(split === -1 ? parsed.positionals : [], values);
  const [command, ...args] = remote ? [""] : commandLine;
  const auth = authSettingsOf(values, remote);
  if (!remote && (command === undefined || command === "")) {
    throw new UsageError("the upstream COMMAND is missing");
  }
  const logLevel = values["log-level"] ?? "info";
  if (!isLogLevel(logLevel)) {
    throw new UsageError("--log-level needs error, warn, info or debug");
  }
  if (values.name !== undefined && values.name.trim() === "") {
    throw new UsageError("--name needs a name");
  }
  const protocol = values.protocol ?? "2026-07-28";
  if (!isProtocol(protocol)) throw new UsageError("--protocol needs 2026-07-28 or auto");
  const limits = parseLimitFlags(values);
  if (!limits.ok) throw new UsageError(limits.message);
  return {
    kind: "run",
    command: command!,
    args,
    ...(remote && { remote }),
    ...(auth && { auth }),
    name: values.name ?? (remote ? remote.url.hostname : basename(command!, extname(command!))),
    logLevel,
    limits: limits.limits,
    protocol,
  };
}

/**
 * The URL upstream of the command line: one positional that is a URL, with
 * the HTTP flags. HTTP flags without a URL are not valid.
 */
function remoteOf(
  positionals: readonly string[],
  values: HttpFlagValues,
): RemoteTarget | undefined {
  const [first, ...rest] = positionals;
  if (first === undefined || !isUrlArgument(first)) {
    const flag = httpFlagsGiven(values);
    if (flag) throw new UsageError(`${flag} needs an upstream server at a URL`);
    return undefined;
  }
  if (rest.length > 0) throw new UsageError("a URL upstream takes no arguments after the URL");
  try {
    return parseRemote(first, values);
  } catch (error) {
    if (error instanceof RemoteArgumentError) throw new UsageError(error.message);
    throw error;
  }
}

async function main(): Promise<number> {
  // SDK code calls console.debug; stdout is the protocol.
  redirectConsoleToStderr();
  const profile = VSCODE_PROFILE;
  if (Deno.args[0] === "logout") {
    // The logout and its OAuth code load only for it.
    const { logoutMain } = await import("./lib/auth/logout.ts");
    const logout = await logoutMain(Deno.args, createLogger(profile.name, "info"), HELP_POINTER);
    if (logout !== undefined) return logout;
  }
  if (Deno.args[0] === "login") {
    // The login and its OAuth code load only for it.
    const { loginMain } = await import("./lib/auth/login.ts");
    const login = await loginMain(Deno.args, createLogger(profile.name, "info"), HELP_POINTER);
    if (login !== undefined) return login;
  }
  // `doctor` takes the options of the server entry; it signs in never.
  const doctor = Deno.args[0] === "doctor";
  let cli: Command;
  let tokenSource;
  try {
    cli = parseCommandLine(doctor ? Deno.args.slice(1) : Deno.args);
    // authSettingsOf gives no sign-in for an Authorization header of --header-env.
    if (cli.kind === "run" && cli.remote && cli.auth && !doctor) {
      const log = createLogger(profile.name, cli.logLevel);
      tokenSource = await createSignIn(cli.auth, cli.remote.url.href, {
        logger: log,
        name: executableName(),
        ...(cli.remote.caCerts && { caCerts: cli.remote.caCerts }),
      });
      const discover = await discoverLimitMs(cli.limits.discover_timeout_ms, tokenSource, cli.auth);
      cli = { ...cli, limits: { ...cli.limits, discover_timeout_ms: discover } };
    }
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof AuthOptionError)) throw error;
    const log = createLogger(profile.name, "error");
    log.error(error.message);
    Deno.stderr.writeSync(new TextEncoder().encode(HELP_POINTER));
    return 2;
  }
  if (cli.kind === "help") {
    await Deno.stdout.write(new TextEncoder().encode(USAGE));
    return 0;
  }
  if (cli.kind === "version") {
    await Deno.stdout.write(new TextEncoder().encode(`mcp-bridge-vscode ${VERSION}\n`));
    return 0;
  }
  if (doctor) {
    // The doctor loads only for it.
    const { doctorMain } = await import("./lib/doctor/main.ts");
    return await doctorMain(cli, { profile, version: VERSION });
  }
  const log = createLogger(profile.name, cli.logLevel);
  const { command, args, limits, remote } = cli;
  const spawn = () =>
    spawnStdioLink({
      command,
      args,
      maxLineBytes: limits.max_line_bytes,
      stopGraceMs: limits.child_stop_grace_ms,
    });
  const stdio = openStdio();
  const frontend = new Frontend({
    profile,
    limits,
    log,
    fallback: { name: cli.name, version: VERSION },
    connect: remote
      ? connectRemote(remote, {
        debug: (message) => log.debug(message),
        ...(tokenSource && { tokenSource }),
      })
      : spawn,
    ...(cli.protocol === "auto" && {
      legacy: legacyConnect(remote, spawn, {
        debug: (message) => log.debug(message),
        ...(tokenSource && { tokenSource }),
      }),
    }),
    // Plain reads and writes on the event loop: no web stream stage, no
    // thread hand-off per chunk (lib/jsonrpc/byte_io.ts, lib/jsonrpc/stdio_pipes.ts).
    output: stdio.output,
  });
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

if (import.meta.main) {
  let code: number;
  try {
    code = await main();
  } catch (error) {
    createLogger(VSCODE_PROFILE.name, "error").error(
      `internal error: ${error instanceof Error ? error.message : String(error)}`,
    );
    code = 1;
  }
  Deno.exit(code);
}
