/**
 * The log of the bridge: one line per event on stderr, tagged with the
 * profile name and the level. stdout is the protocol and never gets a log.
 * The lines go through the process's {@linkcode stderrSink}: a stderr that
 * nobody reads never blocks the bridge.
 *
 * @module
 */

import { stderrSink } from "./log_sink.ts";

/** The levels of the log, from the most to the least important. */
export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;

/** A level of the log. */
export type LogLevel = typeof LOG_LEVELS[number];

/** True for a name of {@linkcode LOG_LEVELS}. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Where log lines go. */
export interface Logger {
  /** False when lines of this level go nowhere: the caller can skip building them. */
  enabled?(level: LogLevel): boolean;
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

/** A logger that writes `[tag] level: message` lines, to the process's stderr by default. */
export function createLogger(
  tag: string,
  level: LogLevel,
  sink: (line: string) => void = (line) => stderrSink().write(line),
): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const line = (at: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(at) > rank) return;
    // One event is one line: newlines inside the message would split it.
    sink(`[${tag}] ${at}: ${message.replaceAll(/\r?\n/g, " ")}\n`);
  };
  return {
    enabled: (at) => LOG_LEVELS.indexOf(at) <= rank,
    error: line("error"),
    warn: line("warn"),
    info: line("info"),
    debug: line("debug"),
  };
}

/**
 * A logger whose lines begin with `label: ` (a session or an upstream of
 * `serve`), on `log`.
 *
 * @example
 * ```ts
 * import { createLogger, labeledLogger } from "./log.ts";
 * const lines: string[] = [];
 * labeledLogger(createLogger("tag", "info", (l) => lines.push(l)), "session #3").info("hello");
 * if (lines[0] !== "[tag] info: session #3: hello\n") throw new Error(lines[0]);
 * ```
 */
export function labeledLogger(log: Logger, label: string): Logger {
  const at = (line: (message: string) => void) => (message: string) => line(`${label}: ${message}`);
  return {
    ...(log.enabled && { enabled: (level: LogLevel) => log.enabled!(level) }),
    error: at((m) => log.error(m)),
    warn: at((m) => log.warn(m)),
    info: at((m) => log.info(m)),
    debug: at((m) => log.debug(m)),
  };
}

/** A logger that drops every line. */
export const SILENT_LOGGER: Logger = {
  enabled: () => false,
  error() {},
  warn() {},
  info() {},
  debug() {},
};

/** Sends every `console` method to stderr (its sink): SDK code calls `console.debug`. */
export function redirectConsoleToStderr(): void {
  const toStderr = (...args: unknown[]) => {
    const text = args.map((a) => typeof a === "string" ? a : Deno.inspect(a)).join(" ");
    stderrSink().write(text + "\n");
  };
  for (
    const method of ["log", "debug", "info", "warn", "error", "trace", "dir", "table"] as const
  ) {
    (console as unknown as Record<string, unknown>)[method] = toStderr;
  }
}
