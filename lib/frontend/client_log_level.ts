/**
 * Logging (M3): revision 2026-07-28 has no logging/setLevel, so the bridge
 * keeps the level of the client, sends it in the `_meta` of each upstream
 * request, and passes on the upstream log messages at or above it.
 *
 * @module
 */

import { isObject, type Json, type JsonObject, type Notification } from "../jsonrpc/message.ts";

/** The levels of logging/setLevel, from the least to the most severe. */
export const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

/** A level of logging/setLevel. */
export type LoggingLevel = typeof LOGGING_LEVELS[number];

/**
 * The level of valid logging/setLevel params, or `undefined`.
 */
export function setLevelParams(params: Json | undefined): LoggingLevel | undefined {
  if (!isObject(params)) return undefined;
  const level = params.level;
  return (LOGGING_LEVELS as readonly Json[]).includes(level ?? null)
    ? level as LoggingLevel
    : undefined;
}

/**
 * A log message of the upstream server for the client: level, logger and
 * data, without the upstream `_meta`; nothing without a level of the client
 * or below it (a request can start before a change of the level).
 */
export function logMessageFor(
  params: JsonObject,
  clientLevel: LoggingLevel | undefined,
): JsonObject | undefined {
  const level = params.level as LoggingLevel;
  if (clientLevel === undefined || !LOGGING_LEVELS.includes(level)) return undefined;
  if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(clientLevel)) return undefined;
  const out: JsonObject = { level, data: params.data ?? null };
  if (typeof params.logger === "string") out.logger = params.logger;
  return out;
}

/**
 * The `notifications/message` for the client of an upstream log message
 * ({@linkcode logMessageFor}), or nothing.
 *
 * @example
 * ```ts
 * import { logNotificationFor } from "./client_log_level.ts";
 * const upstream = { level: "warning", data: "disk low", _meta: { k: 1 } };
 * const out = logNotificationFor(upstream, "info");
 * if (out?.method !== "notifications/message" || JSON.stringify(out).includes("_meta")) {
 *   throw new Error();
 * }
 * if (logNotificationFor(upstream, "error") !== undefined) throw new Error("below the level");
 * ```
 */
export function logNotificationFor(
  params: JsonObject,
  clientLevel: LoggingLevel | undefined,
): Notification | undefined {
  const out = logMessageFor(params, clientLevel);
  return out && { jsonrpc: "2.0", method: "notifications/message", params: out };
}
