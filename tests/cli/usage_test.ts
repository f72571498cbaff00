/**
 * The reasons of usage errors: an option named, never a value or the URL
 * (tests/cli/run_test.ts runs the command line, tests/cli/command_line_test.ts
 * parses logout).
 */

import { parseArgs } from "node:util";
import { usageReason } from "../../lib/cli/usage.ts";
import { ok, strictEqual } from "node:assert/strict";

Deno.test("usageReason: an unknown option of parseArgs is named, never its value or the URL", () => {
  const options = { "token-store": { type: "string" } } as const;
  const args = ["https://mcp.example/k?key=s3cret", "--bogus=s3cret"];
  const error = (() => {
    try {
      parseArgs({ args, options, allowPositionals: true });
    } catch (error) {
      return error;
    }
  })();
  ok(error !== undefined, "parseArgs refused the option");
  strictEqual(usageReason(error, args, options), "the option --bogus is not known");
});
