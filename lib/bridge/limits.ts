/**
 * The time limits and size limits of the bridge, in one place. Tests pass
 * smaller values; no test waits for a real limit of 1 h or 60 s.
 *
 * @module
 */

/** Limits of one bridge connection. */
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
  /** New streams after losses, before the bridge waits for a change. */
  readonly max_lost_stream_retries: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The limits of the spec. */
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
  max_lost_stream_retries: 3,
});

/** The time limit of one round of a forwarded request. */
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

/** A limit in ms as the text of a detail: "120 s", or "250 ms" below a second. */
export function formatLimit(ms: number): string {
  return ms >= SECOND && ms % SECOND === 0 ? `${ms / SECOND} s` : `${ms} ms`;
}
