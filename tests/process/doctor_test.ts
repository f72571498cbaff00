/**
 * `mcp-bridge-vscode doctor`: the real program (the bundle, `program.ts`: `doctor`)
 * with the demo server (2026-07-28): exit 0, the report on stdout and
 * nothing on stderr; and a command that does not start: exit 1. The reports
 * of the other upstreams run in the test's own process
 * (tests/doctor/doctor_test.ts), the usage error in tests/cli/run_test.ts.
 */

import { strictEqual } from "node:assert/strict";
import { assertExcludes, assertIncludes } from "../assert.ts";
import { DENO, ROOT, runBridge } from "./helpers.ts";

const DEMO = [DENO, "run", `${ROOT}scripts/demo_server.ts`];

Deno.test("doctor: the demo server (2026-07-28) is fine: exit 0, its capabilities, the R6 repair of 'sum'", async () => {
  const out = await runBridge(["doctor", "--", ...DEMO]);
  strictEqual(out.code, 0, out.stdout + out.stderr);
  assertIncludes(
    out.stdout,
    "ok      The upstream server answers server/discover; it speaks revision 2026-07-28.",
  );
  assertIncludes(
    out.stdout,
    "Capabilities: tools (listChanged), prompts (listChanged), resources (listChanged), completion, log messages.",
  );
  assertIncludes(
    out.stdout,
    "repair  tool 'sum': gave the array schema at /properties/numbers an items schema",
  );
  assertIncludes(out.stdout, "ok      tools/list: 2 items.");
  assertIncludes(out.stdout, "Result: nothing would break in VS Code (the bridge repairs 1).");
  strictEqual(out.stderr, "");
});

Deno.test("doctor: a command that does not start: exit 1 with the cause", async () => {
  const out = await runBridge(["doctor", "--", `${ROOT}no/such/v4lue-s3cr3t-server`]);
  strictEqual(out.code, 1);
  assertIncludes(out.stdout, "break   The upstream server does not start or answer:");
  // The command's file name is shown, not its directory or its arguments.
  assertExcludes(out.stdout, `${ROOT}no/such`);
});
