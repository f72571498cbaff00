/**
 * The `_meta` passthrough: which keys of the client's `_meta` go to the
 * upstream server. One key that is not valid never fails a request: it is
 * dropped.
 *
 * @module
 */

import type { JsonObject } from "../jsonrpc/message.ts";
import type { MetaPassthrough } from "../settings/profile.ts";

const LABEL = /^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$/;

/**
 * The grammar of `_meta` keys: an optional prefix of dot-separated labels
 * followed by a slash, then a name. A label starts with a letter and ends
 * with a letter or a digit; a name, unless empty, starts and ends with a
 * letter or a digit.
 */
export function isValidMetaKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (!NAME.test(name)) return false;
  if (slash === -1) return true;
  const labels = key.slice(0, slash).split(".");
  return labels.every((label) => LABEL.test(label));
}

/** True for a prefix whose second label is `modelcontextprotocol` or `mcp`. */
export function hasReservedPrefix(key: string): boolean {
  const slash = key.lastIndexOf("/");
  if (slash === -1) return false;
  const second = key.slice(0, slash).split(".")[1];
  return second === "modelcontextprotocol" || second === "mcp";
}

/** Keys that the upstream client writes itself. */
const ENVELOPE_NAMES = new Set([
  "protocolVersion",
  "clientInfo",
  "clientCapabilities",
  "logLevel",
  "subscriptionId",
]);

function isEnvelopeKey(key: string): boolean {
  if (key === "progressToken") return true;
  const prefix = "io.modelcontextprotocol/";
  return key.startsWith(prefix) && ENVELOPE_NAMES.has(key.slice(prefix.length));
}

/** True when the profile allows the key. */
function isAllowed(key: string, allow: MetaPassthrough): boolean {
  return allow.keys.includes(key) || allow.prefixes.some((prefix) => key.startsWith(prefix));
}

/**
 * The `_meta` keys of a client request that go to the upstream server, with
 * their values unchanged.
 */
export function passthroughMeta(
  meta: JsonObject | undefined,
  allow: MetaPassthrough,
): JsonObject | undefined {
  if (!meta) return undefined;
  let out: JsonObject | undefined;
  for (const [key, value] of Object.entries(meta)) {
    if (
      !isAllowed(key, allow) || !isValidMetaKey(key) || isEnvelopeKey(key) || hasReservedPrefix(key)
    ) continue;
    (out ??= {})[key] = value;
  }
  return out;
}
