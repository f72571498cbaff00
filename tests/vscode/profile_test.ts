/**
 * The vscode profile is the table of the spec ("The profile"), and it is
 * frozen: the product is a property of the executable, and no code of the
 * bridge can change it while it runs.
 */

import { deepStrictEqual, ok, throws } from "node:assert/strict";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

Deno.test("vscode profile: the values of the spec's table", () => {
  deepStrictEqual(VSCODE_PROFILE, {
    name: "mcp-bridge-vscode",
    reply_protocol_version: "2025-11-25",
    request_id_prefix: "b-",
    meta_passthrough: { keys: ["traceparent", "tracestate"], prefixes: ["vscode."] },
    quirks: {
      normalize_array_items: true,
      drop_non_object_output_schema: true,
      strict_legacy_results: false,
    },
  });
});

Deno.test("vscode profile: frozen to the leaves; a change throws", () => {
  const mutable = VSCODE_PROFILE as unknown as {
    name: string;
    meta_passthrough: { keys: string[]; prefixes: string[] };
    quirks: { strict_legacy_results: boolean };
  };
  throws(() => mutable.name = "other", TypeError);
  throws(() => mutable.quirks.strict_legacy_results = true, TypeError);
  throws(() => mutable.meta_passthrough.keys.push("baggage"), TypeError);
  throws(() => mutable.meta_passthrough.prefixes[0] = "", TypeError);
  ok(!VSCODE_PROFILE.meta_passthrough.keys.includes("baggage"));
});
