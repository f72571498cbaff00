/**
 * Every flag of the command line in one table: its name, its kind, what
 * `--help` says of it, and the subcommands that take it (the bridge,
 * `doctor`, `login`, `logout`). The `parseArgs` options of each subcommand
 * and the help text (`help.ts`) are made from it; the values are checked
 * where their rule lives (`settings/limits.ts`, `upstream/http_options.ts`,
 * `auth/options.ts`).
 *
 * @module
 */

import type { OptionKind } from "./usage.ts";
import { LIMIT_FLAGS, limitFlagDefault, type LimitUnit } from "../settings/limits.ts";

/**
 * A subcommand: the stdio bridge itself (`bridge`), or one named on the
 * command line (`serve`: the bridge over HTTP).
 */
export type Subcommand = "bridge" | "serve" | "doctor" | "login" | "logout";

/** The part of `--help` that shows a flag. */
export type FlagGroup = "bridge" | "http" | "general" | "sign-in" | "serve";

/** One flag. */
export interface Flag {
  /** Without the dashes. */
  readonly name: string;
  readonly type: "string" | "boolean";
  readonly multiple?: boolean;
  /** The word of its value in `--help` (none for a boolean). */
  readonly value?: string;
  /** What `--help` says of it, with its default. */
  readonly help: string;
  readonly group: FlagGroup;
  readonly commands: readonly Subcommand[];
}

const BRIDGE: readonly Subcommand[] = ["bridge", "serve", "doctor"];
const REMOTE: readonly Subcommand[] = ["bridge", "serve", "doctor", "login"];
const SERVE_ONLY: readonly Subcommand[] = ["serve"];

const WORD: Record<LimitUnit, string> = { seconds: "SECONDS", bytes: "BYTES", count: "N" };

/** The flags, in the order of `--help`. */
export const FLAGS: readonly Flag[] = Object.freeze([
  {
    name: "name",
    type: "string",
    value: "NAME",
    help: "The server name when the upstream gives none (default: the file name of COMMAND)",
    group: "bridge",
    commands: BRIDGE,
  },
  ...LIMIT_FLAGS.map((entry): Flag => ({
    name: entry.flag.slice(2),
    type: "string",
    value: WORD[entry.unit],
    help: `${entry.help} (default: ${limitFlagDefault(entry)})`,
    group: "bridge",
    commands: BRIDGE,
  })),
  {
    name: "protocol",
    type: "string",
    value: "REVISION",
    help: "2026-07-28, or auto: an upstream server of revision 2025-11-25 is served as it is " +
      "(default: 2026-07-28)",
    group: "bridge",
    commands: BRIDGE,
  },
  {
    name: "log-level",
    type: "string",
    value: "LEVEL",
    help: "error, warn, info or debug (default: info)",
    group: "bridge",
    commands: BRIDGE,
  },
  {
    name: "tool",
    type: "string",
    multiple: true,
    value: "GLOB",
    help: "Show only the tools whose names match GLOB, where * matches any run of " +
      "characters (repeatable; case-sensitive)",
    group: "bridge",
    commands: BRIDGE,
  },
  {
    name: "ignore-tool",
    type: "string",
    multiple: true,
    value: "GLOB",
    help: "Hide the tools whose names match GLOB, also those that --tool shows " +
      "(repeatable); a call of a hidden tool never reaches the server",
    group: "bridge",
    commands: BRIDGE,
  },
  {
    name: "header-env",
    type: "string",
    multiple: true,
    value: "NAME=VARIABLE",
    help: "Send header NAME with the value of the environment variable VARIABLE " +
      "(repeatable; for a URL)",
    group: "http",
    commands: REMOTE,
  },
  {
    name: "ca-file",
    type: "string",
    value: "PATH",
    help: "PEM certificates to trust besides the system roots",
    group: "http",
    commands: REMOTE,
  },
  {
    name: "max-response-bytes",
    type: "string",
    value: "N",
    help: "The largest JSON response and SSE event of a URL upstream (default: 67108864)",
    group: "http",
    commands: REMOTE,
  },
  {
    name: "allow-http",
    type: "boolean",
    help: "Allow a plain http: URL whose host is not loopback",
    group: "http",
    commands: REMOTE,
  },
  {
    name: "no-hinted-resend",
    type: "boolean",
    help: "Never send a tools/call once more after a failure of the connection on the strength " +
      "of its tool's readOnlyHint or idempotentHint (for a URL)",
    group: "http",
    commands: REMOTE,
  },
  {
    name: "port",
    type: "string",
    value: "PORT",
    help: "The TCP port to listen on; 0 takes any free port (default: 8770)",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "host",
    type: "string",
    value: "HOST",
    help: "The address to listen on (default: 127.0.0.1); an address that is not " +
      "loopback needs --token-env",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "config",
    type: "string",
    value: "FILE",
    help: 'Several upstream servers, each at /NAME/mcp: a JSON file {"servers": ' +
      '{"NAME": {"args": [the options and upstream of one bridge]}}}',
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "token-env",
    type: "string",
    value: "VARIABLE",
    help: "Ask every request for the bearer token in the environment variable VARIABLE",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "allow-origin",
    type: "string",
    multiple: true,
    value: "ORIGIN",
    help: "Accept requests from the web origin ORIGIN too (repeatable); a request " +
      "without Origin is accepted",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "replica",
    type: "string",
    value: "NAME",
    help: "Begin every session id with NAME and a dot, so that a reverse proxy sends " +
      "each session to its replica",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "max-sessions",
    type: "string",
    value: "N",
    help: "The client sessions at one time; more get HTTP status 503 (default: 64)",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "session-idle",
    type: "string",
    value: "SECONDS",
    help: "How long a session without a stream or a request lives (default: 900)",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "upstream-grace",
    type: "string",
    value: "SECONDS",
    help: "How long a shared upstream server runs after its last session ended " +
      "(default: 30)",
    group: "serve",
    commands: SERVE_ONLY,
  },
  {
    name: "help",
    type: "boolean",
    help: "Show this text",
    group: "general",
    commands: BRIDGE,
  },
  {
    name: "version",
    type: "boolean",
    help: "Show the version",
    group: "general",
    commands: BRIDGE,
  },
  {
    name: "sign-in-timeout",
    type: "string",
    value: "SECONDS",
    help: "The time limit of one sign-in (default: 300)",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "redirect-port",
    type: "string",
    value: "PORT",
    help: "The port of http://127.0.0.1:PORT/callback (default: a port derived from the URL)",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "no-browser",
    type: "boolean",
    help: "Never start a browser: open the URL of the log line",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "client-id",
    type: "string",
    value: "ID",
    help: "A client registered by hand at the authorization server",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "client-issuer",
    type: "string",
    value: "URL",
    help: "The issuer of --client-id (needed with it)",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "client-secret-env",
    type: "string",
    value: "VAR",
    help: "The variable that holds the secret of --client-id",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "client-metadata-url",
    type: "string",
    value: "URL",
    help: "A client ID metadata document to use as the client ID",
    group: "sign-in",
    commands: REMOTE,
  },
  {
    name: "token-store",
    type: "string",
    value: "DIR",
    help: "Where tokens and clients live (default: the config directory, mcp-bridge-vscode/)",
    group: "sign-in",
    commands: [...REMOTE, "logout"],
  },
]);

/**
 * The options of a subcommand, for `parseOptions` (`usage.ts`).
 */
export function optionsOf(command: Subcommand): Record<string, OptionKind> {
  const options: Record<string, OptionKind> = {};
  for (const flag of FLAGS) {
    if (!flag.commands.includes(command)) continue;
    options[flag.name] = flag.multiple ? { type: flag.type, multiple: true } : { type: flag.type };
  }
  return options;
}

/** The names of the flags of a group that a subcommand takes. */
export function flagNames(group: FlagGroup): readonly string[] {
  return FLAGS.filter((flag) => flag.group === group).map((flag) => flag.name);
}
