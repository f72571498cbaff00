/**
 * The profile of mcp-bridge-vscode.
 *
 * @module
 */

import type { Profile } from "../frontend/profile.ts";

/** The settings of the bridge for Visual Studio Code and its Copilot chat. */
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
