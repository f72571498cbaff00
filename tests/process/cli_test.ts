/**
 * The command line of the real program: `--help` with each limit flag, a bad
 * value (exit 2, the reason and the pointer to `--help` on stderr, nothing on
 * stdout) and a stderr without noise. The reasons of every flag and value
 * are checked in the test's own process (tests/cli/run_test.ts), the limit
 * flags and their effect over the wire in tests/settings/limits_test.ts.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { LIMIT_FLAGS, limitFlagDefault } from "../../lib/settings/limits.ts";
import { usageText } from "../../lib/cli/help.ts";
import { HELP_POINTER } from "../../lib/cli/usage.ts";
import { BridgeProcess, DENO, MODERN_SERVER, programArgs, ROOT } from "./helpers.ts";

const dec = new TextDecoder();

/** Runs `deno` with `args` (the program under test's by default) and no input. */
async function run(args: string[], deno = programArgs) {
  const out = await new Deno.Command(DENO, {
    args: deno(args),
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("--help shows each limit flag of the table with its default", async () => {
  const help = await run(["--help"]);
  strictEqual(help.code, 0);
  strictEqual(help.stdout, usageText());
  for (const entry of LIMIT_FLAGS) {
    const at = help.stdout.indexOf(`  ${entry.flag} `);
    strictEqual(at >= 0, true, `${entry.flag} is missing`);
    const next = help.stdout.slice(at + 2).search(/\n {2}--/);
    const text = help.stdout.slice(at, next === -1 ? undefined : at + 2 + next);
    strictEqual(text.includes(`(default: ${limitFlagDefault(entry)})`), true, text);
  }
  deepStrictEqual(
    LIMIT_FLAGS.map((e) => [e.flag, limitFlagDefault(e)]),
    [
      ["--request-timeout", "120"],
      ["--call-timeout", "3600"],
      ["--input-timeout", "3600"],
      ["--discover-timeout", "60"],
      ["--max-line-bytes", "67108864"],
      ["--max-in-flight", "256"],
      ["--shutdown-grace", "5"],
      ["--stop-grace", "2"],
    ],
  );
});

Deno.test("a bad value of a limit flag: exit 2, one line naming the flag, then the pointer to --help", async () => {
  const out = await run(["--request-timeout", "sk-secret-token", "--", "x"]);
  strictEqual(out.code, 2);
  strictEqual(out.stdout, "");
  const [first, ...rest] = out.stderr.split("\n");
  strictEqual(
    first!.startsWith("[mcp-bridge-vscode] error: --request-timeout needs "),
    true,
    first,
  );
  strictEqual(rest.join("\n"), HELP_POINTER);
  strictEqual(out.stderr.includes("sk-secret-token"), false);
});

Deno.test("a normal session at the default log level leaves stderr empty", async () => {
  await using bridge = new BridgeProcess(["--", ...MODERN_SERVER]);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "echo", arguments: { text: "hi" } });
  strictEqual(typeof (await bridge.response(2)).result, "object");
  strictEqual(await bridge.exit(), 0);
  strictEqual(bridge.stderr, "");
});

Deno.test("deno task start runs with -q: no warning of the permissions in the config", async () => {
  const task = await new Deno.Command(DENO, {
    args: ["task", "start", "--version"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(task.code, 0);
  const stderr = dec.decode(task.stderr);
  strictEqual(/permissions in the config/i.test(stderr), false, stderr);
  // Without -q, Deno prints it: the check above can fail.
  const loud = await run(["--version"], (argv) => ["run", "-P", `${ROOT}main.ts`, ...argv]);
  strictEqual(/permissions in the config/i.test(loud.stderr), true, loud.stderr);
});
