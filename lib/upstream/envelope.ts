/**
 * The `_meta` keys of revision 2026-07-28 that the upstream client writes and
 * reads: the envelope of each request, and the subscription id of the events
 * of a listen stream.
 *
 * @module
 */

/**
 * The revision that the bridge speaks to the upstream server.
 */
export const UPSTREAM_PROTOCOL_VERSION = "2026-07-28";

/**
 * The keys of the `_meta` envelope of each request of revision 2026-07-28.
 *
 * @example
 * ```ts
 * import { ENVELOPE_KEYS, UPSTREAM_PROTOCOL_VERSION } from "./envelope.ts";
 * // The `_meta` of each request of revision 2026-07-28.
 * const _meta = {
 *   [ENVELOPE_KEYS.protocolVersion]: UPSTREAM_PROTOCOL_VERSION,
 *   [ENVELOPE_KEYS.clientInfo]: { name: "example", version: "1" },
 *   [ENVELOPE_KEYS.clientCapabilities]: {},
 * };
 * if (!Object.hasOwn(_meta, "io.modelcontextprotocol/protocolVersion")) throw new Error();
 * ```
 */
export const ENVELOPE_KEYS = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  logLevel: "io.modelcontextprotocol/logLevel",
} as const;

/**
 * The key of the subscription id in `_meta` of the events of a listen stream.
 */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/**
 * The key of the server information in `_meta` of the discover result.
 */
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
