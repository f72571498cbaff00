/**
 * The command line of `runCli` in the test's own process (its stdout,
 * stderr and environment given): what is not valid is exit 2, one line
 * `[mcp-bridge-vscode] error: REASON` on stderr and the pointer to `--help`,
 * nothing on stdout. The reason names the flag, the variable or the file,
 * never a value, the URL path or the query (REMOTE.md). One real-process
 * test of each kind stays in tests/process/ (cli_test.ts, http_cli_test.ts).
 */

import { ok, strictEqual } from "node:assert/strict";
import { runCli } from "../../lib/cli/run.ts";
import { HELP_POINTER } from "../../lib/cli/usage.ts";
import { LIMIT_FLAGS } from "../../lib/settings/limits.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SECRET_URL = "https://example.invalid/mcp/secret-path?key=sekrit-query";
/** A config home of these tests only: nothing reads or writes the user's token store. */
const CONFIG_HOME = Deno.makeTempDirSync({ prefix: "mcp-bridge-run-test-" });
globalThis.addEventListener("unload", () => Deno.removeSync(CONFIG_HOME, { recursive: true }));

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

/** `runCli(args)` with `env` as its whole environment (and a config home of the tests). */
async function run(args: string[], env: Record<string, string> = {}): Promise<Output> {
  const out = { code: -1, stdout: "", stderr: "" };
  const vars: Record<string, string> = { XDG_CONFIG_HOME: CONFIG_HOME, ...env };
  out.code = await runCli(args, {
    stdout: (text) => {
      out.stdout += text;
      return Promise.resolve();
    },
    stderr: (text) => {
      out.stderr += text;
    },
    env: (name) => Object.hasOwn(vars, name) ? vars[name] : undefined,
    // A command line that should fail must never start a bridge on the runner's stdin.
    stdio: () => {
      throw new Error("the bridge started");
    },
  });
  return out;
}

function assertClean(text: string): void {
  for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
    ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
  }
}

/** Exit 2, nothing on stdout, the reason line, then the pointer to --help. */
function assertUsage(out: Output, label: string): string {
  strictEqual(out.code, 2, `${label}: ${out.stderr}`);
  strictEqual(out.stdout, "");
  const [first, ...rest] = out.stderr.split("\n");
  ok(first!.startsWith("[mcp-bridge-vscode] error: "), first);
  strictEqual(rest.join("\n"), HELP_POINTER);
  return first!;
}

Deno.test("run: a bad value of each limit flag: exit 2, one line naming the flag, then the pointer to --help", async () => {
  for (const entry of LIMIT_FLAGS) {
    const out = await run([entry.flag, "sk-secret-token", "--", "x"]);
    const first = assertUsage(out, entry.flag);
    strictEqual(first.startsWith(`[mcp-bridge-vscode] error: ${entry.flag} needs `), true, first);
    strictEqual(out.stderr.includes("sk-secret-token"), false);
  }
});

Deno.test("run: a missing variable of --header-env is exit 2 and names the variable", async () => {
  const out = await run(["--header-env", "Authorization=NO_SUCH_VARIABLE", SECRET_URL]);
  strictEqual(out.code, 2);
  ok(out.stderr.includes("NO_SUCH_VARIABLE"), out.stderr);
  ok(out.stderr.endsWith(HELP_POINTER), out.stderr);
  assertClean(out.stdout + out.stderr);
});

Deno.test("run: URLs and flags that are not valid are exit 2 without the URL in the reason", async () => {
  // The third field: the reason is an error of a file, not of the arguments (no pointer to --help).
  const cases: [string[], string, Record<string, string>?, "file"?][] = [
    [["http://example.invalid/mcp/secret-path?key=sekrit-query"], "loopback"],
    [["ftp://example.invalid/mcp/secret-path?key=sekrit-query"], "scheme"],
    [["https://user:v4lue-s3cr3t@example.invalid/mcp/secret-path"], "user name"],
    [["--header-env", "Bad Name=X", SECRET_URL], "NAME=VARIABLE"],
    [["--header-env", "Mcp-Method=X", SECRET_URL], "Mcp-Method", { X: "v4lue-s3cr3t" }],
    [["--header-env", "X-Key=X", SECRET_URL], "not a valid header value", {
      X: "v4lue-s3cr3t\nInjected: 1",
    }],
    [["--max-response-bytes", "0", SECRET_URL], "--max-response-bytes"],
    [["--ca-file", "/no/such/file.pem", SECRET_URL], "/no/such/file.pem", {}, "file"],
    [["--ca-file", `${ROOT}deno.json`, SECRET_URL], "no PEM certificate", {}, "file"],
    [["--ca-file", "x.pem", "--", "some-command"], "needs an upstream server at a URL"],
    [[SECRET_URL, "extra"], "no arguments after the URL"],
  ];
  for (const [args, reason, env, file] of cases) {
    const out = await run(args, env);
    strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    ok(out.stderr.includes(reason), `${args.join(" ")}: ${out.stderr}`);
    strictEqual(out.stderr.endsWith(HELP_POINTER), file === undefined, out.stderr);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("run: an argument parseArgs refuses is exit 2 with a reason of ours, no URL or value", async () => {
  const cases: [string[], string][] = [
    // A URL before --: node:util quoted it, path and query with it.
    [[SECRET_URL, "--", "node", "x.js"], "an argument before -- is not valid"],
    [["--bogus=v4lue-s3cr3t", SECRET_URL], "the option --bogus is not known"],
    [["--bogus", "v4lue-s3cr3t", SECRET_URL], "the option --bogus is not known"],
    [["--v4lue-s3cr3t/secret-path=1", SECRET_URL], "an option is not known"],
    [["--allow-http=v4lue-s3cr3t", SECRET_URL], "--allow-http takes no value"],
    [["--header-env", "-v4lue-s3cr3t", SECRET_URL], "--header-env needs a value"],
    [[SECRET_URL, "--name"], "--name needs a value"],
  ];
  for (const [args, reason] of cases) {
    const out = await run(args);
    const first = assertUsage(out, args.join(" "));
    ok(first.includes(reason), `${args.join(" ")}: ${first}`);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("run: a value that is not valid is exit 2 with a reason that does not repeat it", async () => {
  const cases: string[][] = [
    ["--log-level", "v4lue-s3cr3t", SECRET_URL],
    ["--max-response-bytes", "v4lue-s3cr3t", SECRET_URL],
    ["--sign-in-timeout", "v4lue-s3cr3t", SECRET_URL],
    ["--redirect-port", "v4lue-s3cr3t", SECRET_URL],
    ["logout", SECRET_URL, "--bogus=v4lue-s3cr3t"],
    ["logout", SECRET_URL, "--token-store"],
  ];
  for (const args of cases) {
    const out = await run(args);
    strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    ok(out.stderr.startsWith("[mcp-bridge-vscode] error: "), out.stderr);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("run: a --header-env value that HTTP cannot send is exit 2, names the variable only", async () => {
  for (const value of ["€uro", "a\x01b", "a\x7fb", "\tv4lue-s3cr3t\u2028"]) {
    const out = await run(["--header-env", "X-Key=HEADER_VALUE", SECRET_URL], {
      HEADER_VALUE: value,
    });
    const label = JSON.stringify(value);
    strictEqual(out.code, 2, `${label}: ${out.stderr}`);
    ok(
      out.stderr.includes(
        "--header-env: the environment variable HEADER_VALUE is not a valid header value",
      ),
      `${label}: ${out.stderr}`,
    );
    ok(!(out.stdout + out.stderr).includes(value), `${label}: ${out.stderr}`);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("run: --help shows the URL form and the HTTP flags", async () => {
  const out = await run(["--help"]);
  strictEqual(out.code, 0);
  for (
    const text of [
      "[options] URL",
      "--header-env",
      "--ca-file",
      "--max-response-bytes",
      "--allow-http",
    ]
  ) {
    ok(out.stdout.includes(text), text);
  }
});

Deno.test("run: a usage error of doctor is exit 2 with one line and the pointer to --help", async () => {
  const out = await run(["doctor", "--bogus", "--", "x"]);
  strictEqual(out.code, 2);
  strictEqual(
    out.stderr,
    "[mcp-bridge-vscode] error: the option --bogus is not known\nRun 'mcp-bridge-vscode --help' for the usage.\n",
  );
  strictEqual(out.stdout, "");
});

Deno.test("run: a token store that group or others can write is exit 2 with the directory and the fix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-login-" });
  const store = `${dir}/store`;
  try {
    await Deno.mkdir(store);
    await Deno.chmod(store, 0o777);
    // The store opens before any request: the server of the URL is never asked.
    const args = ["http://127.0.0.1:9/mcp", "--token-store", store, "--redirect-port", "9"];
    for (const argv of [args, ["login", ...args]]) {
      const out = await run(argv);
      strictEqual(out.code, 2, out.stderr);
      const line = out.stderr.split("\n")[0]!;
      ok(
        line.endsWith(
          `the token store ${store} can be written by group or others: run chmod 700 ${store}`,
        ),
        line,
      );
    }
    strictEqual((await Deno.stat(store)).mode! & 0o777, 0o777, "left as it was");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run: sign-in options that are not valid, and a token store that does not open, are exit 2; only the options end with the pointer to --help", async () => {
  // A loopback URL (a sign-in may start there) that nothing answers: no row gets to a request.
  const url = "http://127.0.0.1:9/mcp/secret-path?key=sekrit-query";
  const dir = await Deno.makeTempDir();
  const file = `${dir}/a-file`;
  await Deno.writeTextFile(file, "");
  try {
    const store = await run([url, "--token-store", `${file}/store`]);
    strictEqual(store.code, 2, store.stderr);
    ok(store.stderr.endsWith(`the token store ${file}/store does not open\n`), store.stderr);
    strictEqual(store.stderr.split("\n").length, 2, store.stderr);
    for (
      const args of [
        [url, "--redirect-port", "70000"],
        [url, "--client-id", "x"],
        [
          url,
          "--client-id",
          "x",
          "--client-issuer",
          "https://as.example",
          "--client-secret-env",
          "NOT_SET_ANYWHERE",
        ],
        ["--no-browser", "--", "echo"],
        ["logout"],
      ]
    ) {
      const out = await run(args);
      strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
      ok(out.stderr.endsWith("Run 'mcp-bridge-vscode --help' for the usage.\n"), out.stderr);
      strictEqual(out.stderr.split("\n").length, 3, out.stderr);
      assertClean(out.stderr);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run: an empty glob of --tool or --ignore-tool is exit 2, one line naming the flag, then the pointer", async () => {
  for (
    const [flag, args] of [["--tool", ["--tool", ""]], ["--ignore-tool", [
      "--ignore-tool=",
    ]]] as const
  ) {
    for (const command of [[], ["doctor"]]) {
      const out = await run([...command, ...args, "--", "x"]);
      strictEqual(out.code, 2);
      strictEqual(
        out.stderr,
        `[mcp-bridge-vscode] error: ${flag} needs a tool name or a glob with *, not an empty value\n` +
          HELP_POINTER,
      );
      strictEqual(out.stdout, "");
    }
  }
  // A flag without its value is parseArgs' error, in our words.
  const missing = await run(["--tool"]);
  strictEqual(missing.code, 2);
  ok(
    missing.stderr.startsWith("[mcp-bridge-vscode] error: --tool needs a value\n"),
    missing.stderr,
  );
});

Deno.test("run: --help documents --tool and --ignore-tool", async () => {
  const out = await run(["--help"]);
  strictEqual(out.code, 0);
  ok(out.stdout.includes("  --tool GLOB "), out.stdout);
  ok(out.stdout.includes("  --ignore-tool GLOB "), out.stdout);
});
