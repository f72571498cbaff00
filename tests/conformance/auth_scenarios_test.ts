/**
 * The auth client scenarios of `@modelcontextprotocol/conformance` that list
 * revision 2026-07-28, each run against the real bridge (the v1 SDK client
 * of `auth_client.ts` in front of the bundle of `tests/process/program.ts`).
 * The package's CLI runs under
 * Deno: it needs Node 22 (`fs.globSync`), and the machine's Node is 20. Its
 * servers listen on 127.0.0.1 only (`loopback_cli.ts`).
 *
 * One CLI run per suite instead of one per scenario: a suite runs its
 * scenarios side by side and saves each one's checks and client output
 * (`-o`). The suites `auth` and `draft` hold every auth scenario of
 * 2026-07-28 between them; `draft` also holds scenarios that are not about
 * auth, and the client command (`client.sh`) runs the auth client for
 * `auth/` scenarios only (the CLI names the scenario in
 * `MCP_CONFORMANCE_SCENARIO`).
 */

import { ok } from "node:assert/strict";
import { conformance, ROOT } from "./run_cli.ts";

const DENO = Deno.execPath();
const CLIENT =
  `"${DENO}" run -q --allow-net=127.0.0.1,localhost --allow-run --allow-read --allow-write --allow-env "${ROOT}tests/conformance/auth_client.ts"`;
/** The line that `client.sh` writes to the client's stderr when the auth client exits. */
const EXIT_LINE = /^auth client exit code: (\d+)$/m;

/**
 * The suites that together hold every auth scenario of 2026-07-28, run one
 * after the other: each runs all its scenarios at once, four processes each
 * (the client, the bridge, a browser, and the CLI's servers).
 */
const SUITES = ["auth", "draft"];

/**
 * The scenarios where the client may exit with an error (the scenario's
 * `allowClientError` in the package: the bridge must refuse the server).
 * A single-scenario run passes only if the client exits 0 elsewhere; a
 * suite run does not look at the exit code, so this test does.
 */
const CLIENT_MAY_FAIL = new Set([
  "auth/scope-retry-limit",
  "auth/resource-mismatch",
  "auth/iss-supported-missing",
  "auth/iss-wrong-issuer",
  "auth/iss-unexpected",
  "auth/iss-normalized",
  "auth/metadata-issuer-mismatch",
]);

interface Check {
  name: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

/** Writes the client command of the suites: the auth client for `auth/` scenarios, nothing else. */
async function writeClientScript(dir: string): Promise<string> {
  const script = `${dir}/client.sh`;
  await Deno.writeTextFile(
    script,
    [
      "#!/bin/sh",
      'case "$MCP_CONFORMANCE_SCENARIO" in auth/*) ;; *) exit 0 ;; esac',
      `${CLIENT} "$@"`,
      "code=$?",
      'echo "auth client exit code: $code" >&2',
      "exit $code",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return script;
}

/** The result folders of one suite run by scenario (`<dir>/auth/<name>-<time>`). */
async function resultDirs(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const auth = `${dir}/auth`;
  const entries = await Array.fromAsync(Deno.readDir(auth)).catch(() => []);
  for (const entry of entries) {
    const match = /^(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry.name);
    if (entry.isDirectory && match) found.set(`auth/${match[1]}`, `${auth}/${entry.name}`);
  }
  return found;
}

/** Why `scenario` failed, with its checks and the client's output; undefined if it passed. */
async function verdict(
  scenario: string,
  dir: string | undefined,
  suites: string,
): Promise<string | undefined> {
  if (dir === undefined) {
    return `${scenario}: no result (not run by the suites)\n${suites.slice(-3000)}`;
  }
  const checks = JSON.parse(await Deno.readTextFile(`${dir}/checks.json`)) as Check[];
  const stdout = await Deno.readTextFile(`${dir}/stdout.txt`);
  const stderr = await Deno.readTextFile(`${dir}/stderr.txt`);
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  const code = EXIT_LINE.exec(stderr)?.[1];
  const exitOk = code === "0" || (code !== undefined && CLIENT_MAY_FAIL.has(scenario));
  if (bad.length === 0 && exitOk) return undefined;
  const lines = bad.map((c) => `  ${c.status} ${c.name}: ${c.errorMessage ?? c.description ?? ""}`);
  const exit = code === undefined
    ? "the client did not exit (timed out or killed)"
    : `client exit code ${code}`;
  return `${scenario}: ${bad.length} failed or warned, ${exit}\n${lines.join("\n")}\n` +
    `stdout:\n${stdout.slice(-1500)}\nstderr:\n${stderr.slice(-3000)}`;
}

Deno.test("conformance: every auth client scenario of 2026-07-28 passes through the bridge", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "auth-scenarios-" });
  try {
    const listing = conformance(["list", "--client", "--spec-version", "2026-07-28"]);
    const client = await writeClientScript(tmp);
    const results = new Map<string, string>();
    let output = "";
    for (const suite of SUITES) {
      const dir = `${tmp}/${suite}`;
      output += await conformance([
        "client",
        "--command",
        client,
        "--suite",
        suite,
        "--spec-version",
        "2026-07-28",
        "--timeout",
        "60000",
        "-o",
        dir,
      ]);
      for (const [scenario, path] of await resultDirs(dir)) results.set(scenario, path);
    }
    const listed = await listing;
    const scenarios = [...listed.matchAll(/^\s*- (auth\/[\w-]+) \[([^\]]*)\]/gm)]
      .filter((m) => m[2]!.split(",").includes("2026-07-28"))
      .map((m) => m[1]!);
    ok(scenarios.length >= 20, listed);
    const failures = (await Promise.all(scenarios.map((s) => verdict(s, results.get(s), output))))
      .filter((f) => f !== undefined);
    ok(failures.length === 0, failures.join("\n\n"));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
