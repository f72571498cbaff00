/**
 * The `_meta` keys of revision 2026-07-28 that the upstream client writes and
 * reads: the envelope of each request, and the subscription id of the events
 * of a listen stream.
 *
 * @module
 */

/**
 * The revision that the bridge speaks to the upstream server.
 *
 * @example
 * ```ts
 * import { UPSTREAM_PROTOCOL_VERSION } from "./envelope.ts";
 * if (UPSTREAM_PROTOCOL_VERSION !== "2026-07-28") throw new Error();
 * ```
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
 *
 * @example
 * ```ts
 * import { SUBSCRIPTION_ID_KEY } from "./envelope.ts";
 * const event = {
 *   jsonrpc: "2.0",
 *   method: "notifications/tools/list_changed",
 *   params: { _meta: { [SUBSCRIPTION_ID_KEY]: "listen-1" } },
 * };
 * const key = "io.modelcontextprotocol/subscriptionId";
 * if (event.params._meta[key] !== "listen-1") throw new Error();
 * ```
 */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/**
 * The key of the server information in `_meta` of the discover result.
 *
 * @example
 * ```ts
 * import { SERVER_INFO_KEY } from "./envelope.ts";
 * const discover = { _meta: { [SERVER_INFO_KEY]: { name: "demo", version: "1.0.0" } } };
 * if (!Object.hasOwn(discover._meta, "io.modelcontextprotocol/serverInfo")) throw new Error();
 * ```
 */
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
