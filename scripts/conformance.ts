/**
 * Runs the client scenarios of revision 2026-07-28 of the conformance
 * package (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, under Deno:
 * its CLI needs Node 22 APIs) through the real bridge, driven by a client
 * of revision 2025-11-25 (`scripts/conformance_client.ts`). Not a product
 * path: the package runs with all permissions, outside the project config.
 *
 * Run: `deno run -P=test scripts/conformance.ts`
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const PACKAGE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const SCENARIOS = ["tools_call", "request-metadata"];

let failed = 0;
for (const scenario of SCENARIOS) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-config",
      "--no-lock",
      PACKAGE,
      "client",
      "--command",
      `${Deno.execPath()} run -P=test ${root}scripts/conformance_client.ts`,
      "--scenario",
      scenario,
      "--spec-version",
      "2026-07-28",
    ],
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!out.success) failed++;
}
Deno.exit(failed === 0 ? 0 : 1);
