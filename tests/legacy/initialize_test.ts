/** The initialize of an upstream of revision 2025-11-25 (lib/legacy/initialize.ts). */

import { ok } from "node:assert/strict";
import { legacyInitializeParams } from "../../lib/legacy/initialize.ts";

Deno.test("legacyInitializeParams: the client's capabilities without tasks", () => {
  const params = legacyInitializeParams({
    protocolVersion: "2025-11-25",
    capabilities: { roots: {}, tasks: {} },
    clientInfo: { name: "vscode", version: "1" },
  });
  const capabilities = params.capabilities as Record<string, unknown>;
  ok(!("tasks" in capabilities), JSON.stringify(capabilities));
  ok("roots" in capabilities, JSON.stringify(capabilities));
});
