/**
 * The option parser of the command lines and its reasons: an option named,
 * never a value or the URL (tests/cli/run_test.ts runs the command line,
 * tests/cli/command_line_test.ts parses logout). The rules are node:util's
 * parseArgs in its strict mode, which the last test holds it against.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { parseArgs } from "node:util";
import { OptionError, type OptionKind, parseOptions } from "../../lib/cli/usage.ts";

const OPTIONS: Record<string, OptionKind> = {
  "name": { type: "string" },
  "tool": { type: "string", multiple: true },
  "allow-http": { type: "boolean" },
};
const SECRET = "v4lue-s3cr3t";
const URL_ARG = "https://mcp.example/secret-path?key=sekrit-query";

function reason(args: string[], positionals: true | string = true): string {
  try {
    parseOptions(args, OPTIONS, positionals);
  } catch (error) {
    ok(error instanceof OptionError, String(error));
    for (const secret of [SECRET, "secret-path", "sekrit-query"]) {
      ok(!error.message.includes(secret), error.message);
    }
    return error.message;
  }
  throw new Error(`${args.join(" ")} parsed`);
}

Deno.test("parseOptions: values, repeats, booleans, positionals and the end of the options", () => {
  deepStrictEqual(
    parseOptions(
      ["--name", "a", "--name=b", URL_ARG, "--tool", "x", "--tool=", "--allow-http", "-"],
      OPTIONS,
      true,
    ),
    {
      values: { "name": "b", "tool": ["x", ""], "allow-http": true },
      positionals: [URL_ARG, "-"],
    },
  );
  deepStrictEqual(parseOptions(["--name", "a", "--", "--name", "-x"], OPTIONS, true), {
    values: { name: "a" },
    positionals: ["--name", "-x"],
  });
  // A value may hold = and start with - when it is written inline.
  deepStrictEqual(parseOptions(["--name=-a=b"], OPTIONS).values, { name: "-a=b" });
  deepStrictEqual(parseOptions([], OPTIONS), { values: {}, positionals: [] });
});

Deno.test("parseOptions: each usage error names the option, never a value or the URL", () => {
  strictEqual(reason([`--bogus=${SECRET}`, URL_ARG]), "the option --bogus is not known");
  strictEqual(reason(["--bogus", SECRET]), "the option --bogus is not known");
  strictEqual(reason([`--${SECRET}/secret-path=1`]), "an option is not known");
  strictEqual(reason([`-${SECRET}`]), "the option -v is not known");
  strictEqual(reason(["-1"]), "an option is not known");
  strictEqual(reason([`--allow-http=${SECRET}`]), "--allow-http takes no value");
  strictEqual(reason([URL_ARG, "--name"]), "--name needs a value");
  strictEqual(
    reason(["--tool", `-${SECRET}`]),
    "--tool needs a value; for a value that starts with -, write --tool=VALUE",
  );
  // The first argument in error is the one named.
  strictEqual(
    reason(["--name", "--bogus"]),
    "--name needs a value; for a value that starts with -, write --name=VALUE",
  );
  strictEqual(reason([URL_ARG, "--bogus"], "no positional here"), "no positional here");
  strictEqual(
    reason(["--bogus", URL_ARG], "no positional here"),
    "the option --bogus is not known",
  );
  strictEqual(reason(["--", URL_ARG], "no positional here"), "no positional here");
});

Deno.test("parseOptions: what parses and what fails agree with parseArgs of node:util (strict)", () => {
  const cases: string[][] = [
    ["--name", "a", "x", "--tool", "t", "--tool=u"],
    ["--name=", "--allow-http", "--", "--bogus"],
    ["--allow-http=1"],
    ["--name"],
    ["--name", "-x"],
    ["--name", "-"],
    ["-n"],
    ["--bogus"],
    ["x", "--", "y"],
    ["--tool", "--name"],
  ];
  const options = OPTIONS as Record<string, { type: "string" | "boolean"; multiple?: boolean }>;
  for (const args of cases) {
    let theirs: unknown;
    try {
      const { values, positionals } = parseArgs({ args, options, allowPositionals: true });
      theirs = { values: { ...values }, positionals };
    } catch {
      theirs = "error";
    }
    let ours: unknown;
    try {
      ours = parseOptions(args, OPTIONS, true);
    } catch (error) {
      ok(error instanceof OptionError);
      ours = "error";
    }
    deepStrictEqual(ours, theirs, args.join(" "));
  }
});
