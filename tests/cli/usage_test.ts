/**
 * The reasons of usage errors: an option named, never a value or the URL;
 * for the command line (tests/cli/run_test.ts runs it) and logout.
 */

import { parseArgs } from "node:util";
import { usageReason } from "../../lib/cli/usage.ts";
import { ok, strictEqual, throws } from "node:assert/strict";
import { parseLogout } from "../../lib/cli/command_line.ts";

const SECRET_URL = "https://mcp.example/secret-path?key=sekrit-query";

Deno.test("usage: logout names the option of a usage error, never its value or the URL", () => {
  const cases: [string[], string][] = [
    [[SECRET_URL, "--bogus=v4lue-s3cr3t"], "the option --bogus is not known"],
    [[SECRET_URL, "--token-store"], "--token-store needs a value"],
    [[SECRET_URL, "--token-store", "--v4lue-s3cr3t"], "--token-store needs a value"],
  ];
  for (const [args, reason] of cases) {
    throws(() => parseLogout(args), (error: Error) => {
      ok(error.message.startsWith(reason), error.message);
      for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
        ok(!error.message.includes(secret), error.message);
      }
      return true;
    });
  }
  strictEqual(parseLogout([SECRET_URL, "--token-store", "/tmp/s"]).tokenStore, "/tmp/s");
});

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
