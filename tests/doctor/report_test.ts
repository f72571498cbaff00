/** The report of the doctor: one line a finding, and the verdict. */

import { strictEqual } from "node:assert/strict";
import { Report } from "../../lib/doctor/report.ts";
import { assertIncludes } from "../assert.ts";

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
