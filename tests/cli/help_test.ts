/**
 * The text of `--help`: every flag of the one table with its value, no line
 * past 80 columns, and the README's usage is that text.
 */

import { ok, strictEqual } from "node:assert/strict";
import { FLAGS } from "../../lib/cli/flags.ts";
import { usageText } from "../../lib/cli/help.ts";

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
