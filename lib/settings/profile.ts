/**
 * The profile of a bridge: the product is a property of the executable, never
 * of the clientInfo that the client sends.
 *
 * @module
 */

/**
 * Switches for the rules that a product needs.
 *
 * @example
 * ```ts
 * import type { Quirks } from "./profile.ts";
 * import { applyResultRules } from "../translate/results.ts";
 * import { SILENT_LOGGER } from "../log.ts";
 * const strict: Quirks = {
 *   normalize_array_items: false,
 *   drop_non_object_output_schema: false,
 *   strict_legacy_results: true,
 * };
 * const result = { content: [], structuredContent: [1, 2] };
 * // A strict client gets no structuredContent that is not an object.
 * applyResultRules("tools/call", result, { quirks: strict, icons: "all", log: SILENT_LOGGER });
 * if ("structuredContent" in result) throw new Error();
 * ```
 */
export interface Quirks {
  /** The items rule for array schemas (R6). */
  readonly normalize_array_items: boolean;
  /** Remove each tool outputSchema whose root does not have `type: "object"`. */
  readonly drop_non_object_output_schema: boolean;
  /** Remove the values of results that revision 2025-11-25 does not allow. */
  readonly strict_legacy_results: boolean;
}

/** Which `_meta` keys of the client may go to the upstream server. */
export interface MetaPassthrough {
  readonly keys: readonly string[];
  readonly prefixes: readonly string[];
}

/**
 * A bridge product.
 *
 * @example
 * ```ts
 * import type { Profile } from "./profile.ts";
 * import { VSCODE_PROFILE } from "../vscode/profile.ts";
 * // Another product is another profile: the same bridge with other rules.
 * const profile: Profile = {
 *   ...VSCODE_PROFILE,
 *   name: "mcp-bridge-other",
 *   quirks: { ...VSCODE_PROFILE.quirks, normalize_array_items: false },
 * };
 * if (profile.reply_protocol_version !== "2025-11-25" || profile.quirks.normalize_array_items) {
 *   throw new Error();
 * }
 * ```
 */
export interface Profile {
  /** The tag of the log lines, and the server name when no other name exists. */
  readonly name: string;
  /** The protocolVersion of the initialize result. */
  readonly reply_protocol_version: string;
  /** The prefix of the ids of the bridge's requests to the client. */
  readonly request_id_prefix: string;
  readonly meta_passthrough: MetaPassthrough;
  readonly quirks: Quirks;
}
