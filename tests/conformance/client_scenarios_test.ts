/**
 * The client scenarios `tools_call` and `request-metadata` (SEP-2575: the
 * headers and `_meta` of every request, and the retry of server/discover
 * with a revision that the server lists) of
 * `@modelcontextprotocol/conformance`, through the real bridge driven by the
 * v1 SDK client (`scripts/conformance_client.ts`). Each must pass with no
 * warning. The package's CLI runs under Deno (it needs Node 22 APIs); its
 * servers listen on 127.0.0.1 only (`loopback_cli.ts`).
 */

import { ok } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;
const DENO = Deno.execPath();

for (const scenario of ["tools_call", "request-metadata"]) {
  Deno.test(`conformance: the client scenario ${scenario} passes with no warning`, async () => {
    const out = await new Deno.Command(DENO, {
      args: [
        "run",
        "-q",
        "--allow-net=127.0.0.1,localhost",
        "--allow-run",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-sys",
        `${ROOT}tests/conformance/loopback_cli.ts`,
        "client",
        "--command",
        `${DENO} run -q -P=test ${ROOT}scripts/conformance_client.ts`,
        "--scenario",
        scenario,
        "--spec-version",
        "2026-07-28",
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const dec = new TextDecoder();
    const output = dec.decode(out.stdout) + dec.decode(out.stderr);
    ok(/OVERALL: PASSED/.test(output), output.slice(-3000));
    ok(/, 0 failed, 0 warnings/.test(output), output.slice(-3000));
  });
}
