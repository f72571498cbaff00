/**
 * The one table of flags: the names that each rule's reader knows are the
 * names of the table, each subcommand gets its own flags, and `--help`
 * shows every flag of the table, as the README does.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { SIGN_IN_OPTIONS } from "../../lib/auth/options.ts";
import { LIMIT_FLAGS } from "../../lib/settings/limits.ts";
import { flagNames, FLAGS, optionsOf } from "../../lib/cli/flags.ts";
import { usageText } from "../../lib/cli/help.ts";

Deno.test("flags: the sign-in and limit flags of the table are those that their rules read", () => {
  deepStrictEqual([...flagNames("sign-in")].sort(), [...SIGN_IN_OPTIONS].sort());
  for (const entry of LIMIT_FLAGS) ok(optionsOf("serve")[entry.flag.slice(2)], entry.flag);
  deepStrictEqual(flagNames("http"), ["header-env", "ca-file", "max-response-bytes", "allow-http"]);
});

Deno.test("flags: each subcommand takes its own flags", () => {
  deepStrictEqual(Object.keys(optionsOf("logout")), ["token-store"]);
  deepStrictEqual(
    Object.keys(optionsOf("login")).sort(),
    [...flagNames("http"), ...flagNames("sign-in")].sort(),
  );
  deepStrictEqual(optionsOf("doctor"), optionsOf("serve"));
  deepStrictEqual(optionsOf("serve")["header-env"], { type: "string", multiple: true });
});

Deno.test("help: every flag of the table is in --help, with its value, and no line passes 80 columns", () => {
  const text = usageText();
  for (const flag of FLAGS) {
    ok(text.includes(`  --${flag.name}${flag.value ? ` ${flag.value}` : ""}`), flag.name);
  }
  for (const line of text.split("\n")) ok(line.length <= 80, line);
});

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("the README's usage is the text of --help", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  strictEqual(readme.includes("```\n" + usageText() + "```"), true, usageText());
});
