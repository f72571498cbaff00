/** The repairs of the real result rules, run on a copy. */

import { deepStrictEqual } from "node:assert/strict";
import { repairsOf } from "../../lib/doctor/repairs.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

Deno.test("repairsOf: the rules run on a copy; icons are dropped only for a remote server", () => {
  const result = {
    tools: [{
      name: "t",
      inputSchema: { type: "object" },
      icons: [{ src: "https://x/a.png" }, { src: "data:image/png;base64,AA==" }],
    }],
  };
  const before = structuredClone(result);
  deepStrictEqual(repairsOf("tools/list", result, VSCODE_PROFILE.quirks, "all"), []);
  deepStrictEqual(repairsOf("tools/list", result, VSCODE_PROFILE.quirks, "data_only"), [
    "tools/list 't': dropped 1 of 2 icons (only data: icons of a remote server reach VS Code)",
  ]);
  deepStrictEqual(result, before);
});
