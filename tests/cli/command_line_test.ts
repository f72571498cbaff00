/**
 * The command lines of the subcommands, parsed: a usage error names an
 * option, never its value or the URL.
 */

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
