/**
 * The initialize of the pass-through (LEGACY.md): the params that the
 * upstream server of revision 2025-11-25 gets from those of the client, and
 * the initialize result that the client gets from the upstream's. Pure
 * functions over JSON.
 *
 * @module
 */

import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import { isDataIcon } from "../translate/translate.ts";
import type { Fallback, IconRule } from "../translate/translate.ts";

/** Capabilities without `tasks` (the bridge declares no tasks in either direction). */
function withoutTasks(capabilities: JsonObject): JsonObject {
  const { tasks: _tasks, ...rest } = capabilities;
  return rest;
}

/**
 * The params of the upstream initialize: the client's protocolVersion,
 * clientInfo and capabilities, less `tasks`.
 */
export function legacyInitializeParams(client: JsonObject): JsonObject {
  return {
    protocolVersion: client.protocolVersion ?? null,
    capabilities: isObject(client.capabilities) ? withoutTasks(client.capabilities) : {},
    clientInfo: client.clientInfo ?? null,
  };
}

/** True for the result of an initialize: a protocolVersion and capabilities. */
export function isInitializeResult(value: unknown): value is JsonObject {
  return isObject(value) && typeof value.protocolVersion === "string" &&
    isObject(value.capabilities);
}

/**
 * serverInfo of the upstream server, with the icon rule (a remote upstream
 * keeps only data: icons); the fallback when it has no name.
 */
function legacyServerInfo(info: unknown, fallback: Fallback, icons: IconRule): JsonObject {
  if (!isObject(info) || typeof info.name !== "string" || info.name === "") {
    return { name: fallback.name, version: fallback.version };
  }
  const out: JsonObject = { ...info };
  if (typeof out.version !== "string") out.version = "";
  if (icons === "data_only" && Object.hasOwn(out, "icons")) {
    const kept = Array.isArray(out.icons) ? out.icons.filter(isDataIcon) : [];
    if (kept.length > 0) out.icons = kept;
    else delete out.icons;
  }
  return out;
}

/**
 * The initialize result for the client: the protocolVersion that the
 * upstream server negotiated, its capabilities less `tasks`, its serverInfo
 * (icons by the icon rule) and instructions.
 *
 * @example
 * ```ts
 * import { legacyInitializeResult } from "./initialize.ts";
 * const result = legacyInitializeResult(
 *   { protocolVersion: "2025-06-18", capabilities: { tools: {}, tasks: {} }, serverInfo: { name: "s", version: "1" } },
 *   { name: "fallback", version: "0" },
 *   "all",
 * );
 * if (result.protocolVersion !== "2025-06-18" || "tasks" in (result.capabilities as object)) throw new Error();
 * ```
 */
export function legacyInitializeResult(
  upstream: JsonObject,
  fallback: Fallback,
  icons: IconRule,
): JsonObject {
  const result: JsonObject = {
    protocolVersion: upstream.protocolVersion ?? null,
    capabilities: isObject(upstream.capabilities) ? withoutTasks(upstream.capabilities) : {},
    serverInfo: legacyServerInfo(upstream.serverInfo, fallback, icons),
  };
  if (typeof upstream.instructions === "string") result.instructions = upstream.instructions;
  if (isObject(upstream._meta)) result._meta = upstream._meta;
  return result;
}
