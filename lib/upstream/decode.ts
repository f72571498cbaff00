/**
 * One message of the upstream server from its bytes, for every link: the
 * nesting limit of the upstream side, and a large message kept as a
 * skeleton whose long strings stay bytes of the line.
 *
 * @module
 */

import { LARGE_MESSAGE_BYTES, markLarge } from "../jsonrpc/large.ts";
import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import { parseLine, UPSTREAM_MAX_DEPTH } from "../jsonrpc/parse.ts";
import { parseLargeMessage } from "../jsonrpc/skeleton.ts";

/**
 * Parses one message of the upstream server; undefined for bytes that are
 * not a JSON object, not valid UTF-8, or nested deeper than
 * {@linkcode UPSTREAM_MAX_DEPTH} (the bridge could not write it to the
 * client, so it fails only its own request). A text (an SSE event) is
 * parsed as it is.
 */
export function decodeUpstream(data: Uint8Array | string): JsonObject | undefined {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (bytes.length > LARGE_MESSAGE_BYTES) {
    // A large line keeps its long strings as bytes of the line (skeleton.ts).
    const large = parseLargeMessage(bytes, UPSTREAM_MAX_DEPTH);
    if (large === "invalid") return undefined;
    if (large !== undefined) return large;
  }
  const parsed = parseLine(bytes, UPSTREAM_MAX_DEPTH);
  if (!parsed.ok || !isObject(parsed.value)) return undefined;
  // A large result without a long string is written to the client in slices.
  if (bytes.length > LARGE_MESSAGE_BYTES) markLarge(parsed.value.result);
  return parsed.value;
}
