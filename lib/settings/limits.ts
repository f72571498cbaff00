/**
 * The time limits and size limits of the bridge, in one place. Tests pass
 * smaller values; no test waits for a real limit of 1 h or 60 s.
 *
 * @module
 */

/**
 * Limits of one bridge connection.
 *
 * @example
 * ```ts
 * import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
 * // Tests and embedders start from the defaults and change what they need.
 * const limits: Limits = { ...DEFAULT_LIMITS, list_timeout_ms: 300, max_in_flight_requests: 4 };
 * if (limits.long_round_timeout_ms !== DEFAULT_LIMITS.long_round_timeout_ms) throw new Error();
 * ```
 */
export interface Limits {
  /** tools/list, prompts/list, resources/list, resources/templates/list, completion/complete. */
  readonly list_timeout_ms: number;
  /** The first round of prompts/get and resources/read. */
  readonly first_round_timeout_ms: number;
  /** Each later round of prompts/get and resources/read, and each round of tools/call. */
  readonly long_round_timeout_ms: number;
  /** The answers of the client to the input requests of one round. */
  readonly input_answer_timeout_ms: number;
  /** server/discover; the CLI sets it from --discover-timeout. */
  readonly discover_timeout_ms: number;
  /** Requests of the client in flight at one time. */
  readonly max_in_flight_requests: number;
  /** The longest line, in both directions. */
  readonly max_line_bytes: number;
  /** The deepest nesting of a message of the client. */
  readonly max_depth: number;
  /** Progress notifications per second for each request. */
  readonly max_progress_per_second: number;
  /** Rounds of one request with input. */
  readonly mrtr_max_rounds_client: number;
  /** Input requests in one round. */
  readonly max_input_requests: number;
  /** How long the end of the input waits for the requests and the listener. */
  readonly shutdown_grace_ms: number;
  /** How long the child gets after each step of its stop (stdin closed, SIGTERM). */
  readonly child_stop_grace_ms: number;
  /** The first wait before a new listen stream. */
  readonly listen_backoff_ms: number;
  /** The longest wait before a new listen stream. */
  readonly listen_max_backoff_ms: number;
  /** How long a listen stream lives after its acknowledgment to reset the wait. */
  readonly listen_healthy_ms: number;
  /** How long the bridge waits for the acknowledgment of a listen stream. */
  readonly listen_ack_timeout_ms: number;
  /**
   * How long an idle HTTP/1.1 connection to a URL upstream stays open for
   * the next request: below the keep-alive time of the servers that close
   * an idle connection soonest (gunicorn 2 s; Node.js's https and uvicorn
   * 5 s, nginx 75 s, cloud load balancers 60 s and more), with room for a
   * round trip (the server's time runs from the end of its response, the
   * bridge's from its arrival), so that the bridge never sends a request on
   * a connection at the moment its server closes it.
   */
  readonly http_pool_idle_ms: number;
  /**
   * The bytes that may wait for the stdin of an upstream child: a request
   * that comes while this many wait fails at once with transport_failed.
   */
  readonly max_upstream_backlog_bytes: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The limits of the spec.
 *
 * @example
 * ```ts
 * import { DEFAULT_LIMITS } from "./limits.ts";
 * if (DEFAULT_LIMITS.list_timeout_ms !== 120_000) throw new Error("120 s");
 * if (!Object.isFrozen(DEFAULT_LIMITS)) throw new Error("copy it to change a limit");
 * ```
 */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  list_timeout_ms: 120 * SECOND,
  first_round_timeout_ms: 120 * SECOND,
  long_round_timeout_ms: HOUR,
  input_answer_timeout_ms: HOUR,
  discover_timeout_ms: 60 * SECOND,
  max_in_flight_requests: 256,
  max_line_bytes: 64 * 1024 * 1024,
  max_depth: 64,
  max_progress_per_second: 50,
  mrtr_max_rounds_client: 10,
  max_input_requests: 16,
  shutdown_grace_ms: 5 * SECOND,
  child_stop_grace_ms: 2 * SECOND,
  listen_backoff_ms: 500,
  listen_max_backoff_ms: 30 * SECOND,
  listen_healthy_ms: 10 * SECOND,
  listen_ack_timeout_ms: 10 * SECOND,
  http_pool_idle_ms: 1500,
  max_upstream_backlog_bytes: 16 * 1024 * 1024,
});

/**
 * The time limit of one round of a forwarded request.
 *
 * @example
 * ```ts
 * import { DEFAULT_LIMITS, roundTimeoutMs } from "./limits.ts";
 * const rounds = { first_round_timeout_ms: 1_000, long_round_timeout_ms: 9_000 };
 * const limits = { ...DEFAULT_LIMITS, ...rounds };
 * if (roundTimeoutMs(limits, "resources/read", 1) !== 1_000) throw new Error();
 * if (roundTimeoutMs(limits, "resources/read", 2) !== 9_000) throw new Error();
 * if (roundTimeoutMs(limits, "tools/call", 1) !== 9_000) throw new Error();
 * if (roundTimeoutMs(limits, "tools/list", 1) !== limits.list_timeout_ms) throw new Error();
 * ```
 */
export function roundTimeoutMs(limits: Limits, method: string, round: number): number {
  switch (method) {
    case "tools/call":
      return limits.long_round_timeout_ms;
    case "prompts/get":
    case "resources/read":
      return round === 1 ? limits.first_round_timeout_ms : limits.long_round_timeout_ms;
    default:
      return limits.list_timeout_ms;
  }
}

/**
 * A limit in ms as the text of a detail: "120 s", or "250 ms" below a second.
 *
 * @example
 * ```ts
 * import { formatLimit } from "./limits.ts";
 * if (formatLimit(120_000) !== "120 s" || formatLimit(250) !== "250 ms") throw new Error();
 * if (formatLimit(1_500) !== "1500 ms") throw new Error();
 * ```
 */
export function formatLimit(ms: number): string {
  return ms >= SECOND && ms % SECOND === 0 ? `${ms / SECOND} s` : `${ms} ms`;
}

/**
 * How the value of a limit flag is written.
 */
export type LimitUnit = "seconds" | "bytes" | "count";

/** One flag of the command line that sets limits. */
export interface LimitFlag {
  /** The flag, such as `--request-timeout`. */
  readonly flag: `--${string}`;
  /** The limits it sets; the first one gives the default that `--help` shows. */
  readonly keys: readonly [keyof Limits, ...(keyof Limits)[]];
  readonly unit: LimitUnit;
  /** True when 0 is a valid value (a grace of 0 does not wait). */
  readonly zero: boolean;
  /** What `--help` says of it, without the default. */
  readonly help: string;
}

/**
 * The limit flags of the command line: `cli/command_line.ts` parses them, `--help`
 * shows them and the tests walk them, all from this table.
 *
 * @example
 * ```ts
 * import { LIMIT_FLAGS } from "./limits.ts";
 * const flag = LIMIT_FLAGS.find((entry) => entry.flag === "--request-timeout");
 * if (flag?.unit !== "seconds" || !flag.keys.includes("first_round_timeout_ms")) throw new Error();
 * ```
 */
export const LIMIT_FLAGS: readonly LimitFlag[] = Object.freeze([
  {
    flag: "--request-timeout",
    keys: ["list_timeout_ms", "first_round_timeout_ms"],
    unit: "seconds",
    zero: false,
    help: "The time limit of the list requests, completion/complete and " +
      "the first round of prompts/get and resources/read",
  },
  {
    flag: "--call-timeout",
    keys: ["long_round_timeout_ms"],
    unit: "seconds",
    zero: false,
    help: "The time limit of each round of tools/call and of each later round " +
      "of prompts/get and resources/read",
  },
  {
    flag: "--input-timeout",
    keys: ["input_answer_timeout_ms"],
    unit: "seconds",
    zero: false,
    help: "The time the client gets to answer the input requests of one round",
  },
  {
    flag: "--discover-timeout",
    keys: ["discover_timeout_ms"],
    unit: "seconds",
    zero: false,
    help: "The time limit of server/discover",
  },
  {
    flag: "--max-line-bytes",
    keys: ["max_line_bytes"],
    unit: "bytes",
    zero: false,
    help: "The longest line in each direction",
  },
  {
    flag: "--max-in-flight",
    keys: ["max_in_flight_requests"],
    unit: "count",
    zero: false,
    help: "The requests of the client in flight at one time; more get an error at once",
  },
  {
    flag: "--shutdown-grace",
    keys: ["shutdown_grace_ms"],
    unit: "seconds",
    zero: true,
    help: "How long the end of the input waits for the requests and the listen stream",
  },
  {
    flag: "--stop-grace",
    keys: ["child_stop_grace_ms"],
    unit: "seconds",
    zero: true,
    help: "How long the upstream server gets to stop after its stdin closes, " +
      "and again after SIGTERM, before SIGKILL",
  },
]);

/** The longest time a timer can wait (2^31 - 1 ms); a longer one would fire at once. */
export const MAX_LIMIT_MS = 2 ** 31 - 1;

/**
 * The default of a flag as `--help` writes it: seconds, or the number.
 *
 * @example
 * ```ts
 * import { LIMIT_FLAGS, limitFlagDefault } from "./limits.ts";
 * const flag = LIMIT_FLAGS.find((entry) => entry.flag === "--call-timeout")!;
 * if (limitFlagDefault(flag) !== "3600") throw new Error("an hour, in seconds");
 * ```
 */
export function limitFlagDefault(entry: LimitFlag, limits: Limits = DEFAULT_LIMITS): string {
  const value = limits[entry.keys[0]];
  return entry.unit === "seconds" ? String(value / SECOND) : String(value);
}

/** The limits of a command line, or the one-line reason why a value is not valid. */
export type LimitFlagsParsed =
  | { readonly ok: true; readonly limits: Limits }
  | { readonly ok: false; readonly message: string };

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^\d+$/;

/**
 * The value of one flag in the unit of its limits (ms for seconds), or
 * undefined when it is not valid; the flags of `serve` use the same rules.
 *
 * @example
 * ```ts
 * import { limitValue } from "./limits.ts";
 * if (limitValue({ unit: "seconds", zero: true }, "0.5") !== 500) throw new Error();
 * if (limitValue({ unit: "count", zero: false }, "0") !== undefined) throw new Error();
 * ```
 */
export function limitValue(
  entry: Pick<LimitFlag, "unit" | "zero">,
  text: string,
): number | undefined {
  if (entry.unit === "seconds") {
    if (!DECIMAL.test(text)) return undefined;
    const ms = Math.round(Number(text) * SECOND);
    if (ms > MAX_LIMIT_MS || (ms === 0 && !entry.zero)) return undefined;
    return ms;
  }
  if (!INTEGER.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Why a value of `entry` is not valid. The value itself is not repeated: it could be a secret. */
export function limitFlagMessage(entry: Pick<LimitFlag, "flag" | "unit" | "zero">): string {
  if (entry.unit === "seconds") {
    const least = entry.zero ? "0" : "0.001";
    return `${entry.flag} needs a number of seconds from ${least} to ${
      Math.floor(MAX_LIMIT_MS / SECOND)
    }`;
  }
  return `${entry.flag} needs a whole number${entry.unit === "bytes" ? " of bytes" : ""} above 0`;
}

/**
 * Reads the limit flags from the values of `parseArgs` (keys without the
 * dashes) on top of `base`.
 *
 * @example
 * ```ts
 * import { parseLimitFlags } from "./limits.ts";
 * const parsed = parseLimitFlags({ "request-timeout": "0.3" });
 * if (!parsed.ok || parsed.limits.list_timeout_ms !== 300) throw new Error();
 * if (parseLimitFlags({ "max-in-flight": "0" }).ok) throw new Error();
 * ```
 */
export function parseLimitFlags(
  values: Readonly<Record<string, unknown>>,
  base: Limits = DEFAULT_LIMITS,
): LimitFlagsParsed {
  const limits: { -readonly [K in keyof Limits]: Limits[K] } = { ...base };
  for (const entry of LIMIT_FLAGS) {
    const text = values[entry.flag.slice(2)];
    if (text === undefined) continue;
    const value = typeof text === "string" ? limitValue(entry, text) : undefined;
    if (value === undefined) return { ok: false, message: limitFlagMessage(entry) };
    for (const key of entry.keys) limits[key] = value;
  }
  return { ok: true, limits };
}
