/**
 * The profile of mcp-bridge-vscode.
 *
 * @module
 */

import type { Profile } from "../settings/profile.ts";

/**
 * The settings of the bridge for Visual Studio Code and its Copilot chat.
 *
 * @example
 * ```ts
 * import { VSCODE_PROFILE } from "./profile.ts";
 * import { isBridgeId } from "../jsonrpc/id_scan.ts";
 * if (VSCODE_PROFILE.reply_protocol_version !== "2025-11-25") throw new Error();
 * if (!isBridgeId("b-1", VSCODE_PROFILE.request_id_prefix)) throw new Error();
 * if (!VSCODE_PROFILE.meta_passthrough.prefixes.includes("vscode.")) throw new Error();
 * ```
 */
export const VSCODE_PROFILE: Profile = Object.freeze({
  name: "mcp-bridge-vscode",
  reply_protocol_version: "2025-11-25",
  request_id_prefix: "b-",
  meta_passthrough: Object.freeze({
    keys: Object.freeze(["traceparent", "tracestate"]),
    prefixes: Object.freeze(["vscode."]),
  }),
  quirks: Object.freeze({
    normalize_array_items: true,
    drop_non_object_output_schema: true,
    strict_legacy_results: false,
  }),
});
