/**
 * `--protocol` on the command line of the real program: a value other than
 * 2026-07-28 or auto is exit 2. The rules of the pass-through are tested in
 * process (tests/legacy/passthrough_test.ts).
 */

import { ok, strictEqual } from "node:assert/strict";
import { DENO, programArgs, ROOT } from "./helpers.ts";

Deno.test("--protocol with another value is exit 2 with a line that names the flag", async () => {
  const output = await new Deno.Command(DENO, {
    args: programArgs(["--protocol", "2025-11-25", "--", "true"]),
    cwd: ROOT,
    stdin: "null",
  }).output();
  strictEqual(output.code, 2);
  const stderr = new TextDecoder().decode(output.stderr);
  ok(stderr.split("\n")[0]!.includes("--protocol needs 2026-07-28 or auto"), stderr);
  strictEqual(output.stdout.length, 0);
});
