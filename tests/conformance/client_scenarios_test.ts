/**
 * The client scenarios `tools_call` and `request-metadata` (SEP-2575: the
 * headers and `_meta` of every request, and the retry of server/discover
 * with a revision that the server lists) of
 * `@modelcontextprotocol/conformance`, through the real bridge driven by the
 * v1 SDK client (`scripts/conformance_client.ts`, in front of the bundle of
 * `tests/process/program.ts`). Each must pass with no
 * warning. The package's CLI runs under Deno (it needs Node 22 APIs); its
 * servers listen on 127.0.0.1 only (`loopback_cli.ts`).
 */

import { ok } from "node:assert/strict";
import { programArgs } from "../process/program.ts";
import { conformance, ROOT } from "./run_cli.ts";

const DENO = Deno.execPath();

for (const scenario of ["tools_call", "request-metadata"]) {
  Deno.test(`conformance: the client scenario ${scenario} passes with no warning`, async () => {
    const output = await conformance([
      "client",
      "--command",
      `${DENO} run -q -P=test ${ROOT}scripts/conformance_client.ts ${programArgs([]).join(" ")}`,
      "--scenario",
      scenario,
      "--spec-version",
      "2026-07-28",
    ]);
    ok(/OVERALL: PASSED/.test(output), output.slice(-3000));
    ok(/, 0 failed, 0 warnings/.test(output), output.slice(-3000));
  });
}
