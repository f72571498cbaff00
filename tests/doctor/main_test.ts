/**
 * The doctor in the process: `--protocol auto` (an upstream of revision
 * 2025-11-25 is then no break).
 */

import { strictEqual } from "node:assert/strict";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { runDoctor } from "../../lib/doctor/main.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { assertIncludes } from "../assert.ts";
import { DENO, ROOT } from "../process/helpers.ts";

const LEGACY = ["run", "-A", `${ROOT}tests/fixtures/legacy_server.ts`];

async function doctor(protocol?: string): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await runDoctor({
    command: DENO,
    args: LEGACY,
    name: "legacy",
    logLevel: "info",
    limits: DEFAULT_LIMITS,
    ...(protocol !== undefined && { protocol }),
  }, { profile: VSCODE_PROFILE, version: "0.0.0", argv: [], write: (t) => text += t });
  return { code, text };
}

Deno.test("doctor: with --protocol auto an upstream of revision 2025-11-25 passes through (exit 0)", async () => {
  const auto = await doctor("auto");
  strictEqual(auto.code, 0, auto.text);
  assertIncludes(
    auto.text,
    "ok      The upstream server speaks revision 2025-11-25: with --protocol auto",
  );
  const strict = await doctor();
  strictEqual(strict.code, 1, strict.text);
  assertIncludes(strict.text, "Start the bridge with --protocol auto");
});
