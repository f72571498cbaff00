/**
 * The doctor's modules in the process: the verdict of the report, the
 * repairs of the real result rules on a copy, and `--protocol auto` (an
 * upstream of revision 2025-11-25 is then no break).
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { runDoctor } from "../../lib/doctor/main.ts";
import { repairsOf } from "../../lib/doctor/repairs.ts";
import { Report } from "../../lib/doctor/report.ts";
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

Deno.test("Report: the verdict counts the breaks and the repairs; a finding stays one line", () => {
  const report = new Report();
  report.add("ok", "fine");
  report.add("repair", "a\nrepair");
  strictEqual(
    report.text().split("\n").at(-2),
    "Result: nothing would break in VS Code (the bridge repairs 1).",
  );
  assertIncludes(report.text(), "repair  a repair\n");
  report.add("break", "x");
  report.add("break", "y");
  strictEqual(report.text().split("\n").at(-2), "Result: 2 things would break in VS Code.");
});
