/**
 * The one table of flags: the names that each rule's reader knows are the
 * names of the table, and each subcommand gets its own flags.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { SIGN_IN_OPTIONS } from "../../lib/auth/options.ts";
import { LIMIT_FLAGS } from "../../lib/settings/limits.ts";
import { flagNames, optionsOf } from "../../lib/cli/flags.ts";

Deno.test("flags: the sign-in and limit flags of the table are those that their rules read", () => {
  deepStrictEqual([...flagNames("sign-in")].sort(), [...SIGN_IN_OPTIONS].sort());
  for (const entry of LIMIT_FLAGS) ok(optionsOf("bridge")[entry.flag.slice(2)], entry.flag);
  deepStrictEqual(flagNames("http"), [
    "header-env",
    "ca-file",
    "max-response-bytes",
    "allow-http",
    "no-hinted-resend",
  ]);
});

Deno.test("flags: each subcommand takes its own flags", () => {
  deepStrictEqual(Object.keys(optionsOf("logout")), ["token-store"]);
  deepStrictEqual(
    Object.keys(optionsOf("login")).sort(),
    [...flagNames("http"), ...flagNames("sign-in")].sort(),
  );
  deepStrictEqual(optionsOf("doctor"), optionsOf("bridge"));
  deepStrictEqual(optionsOf("bridge")["header-env"], { type: "string", multiple: true });
});
