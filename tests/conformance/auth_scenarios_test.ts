/**
 * The auth client scenarios of `@modelcontextprotocol/conformance` that list
 * revision 2026-07-28, each run against the real bridge (the v1 SDK client
 * of `auth_client.ts` in front of `main.ts`). The package's CLI runs under
 * Deno: it needs Node 22 (`fs.globSync`), and the machine's Node is 20. Its
 * servers listen on 127.0.0.1 only (`loopback_cli.ts`).
 */

import { ok } from "node:assert/strict";
import { conformance, ROOT } from "./run_cli.ts";

const DENO = Deno.execPath();
const CLIENT =
  `${DENO} run -q --allow-net=127.0.0.1,localhost --allow-run --allow-read --allow-write --allow-env ${ROOT}tests/conformance/auth_client.ts`;

async function runScenario(scenario: string): Promise<string | undefined> {
  const output = await conformance([
    "client",
    "--command",
    CLIENT,
    "--scenario",
    scenario,
    "--spec-version",
    "2026-07-28",
    "--timeout",
    "60000",
  ]);
  return /OVERALL: PASSED/.test(output) ? undefined : `${scenario}:\n${output.slice(-3000)}`;
}

/** Scenarios at a time: each runs four processes (the CLI, the client, the bridge, a browser). */
const PARALLEL = 3;

Deno.test("conformance: every auth client scenario of 2026-07-28 passes through the bridge", async () => {
  const listing = await conformance(["list", "--client", "--spec-version", "2026-07-28"]);
  const scenarios = [...listing.matchAll(/^\s*- (auth\/[\w-]+) \[([^\]]*)\]/gm)]
    .filter((m) => m[2]!.split(",").includes("2026-07-28"))
    .map((m) => m[1]!);
  ok(scenarios.length >= 20, listing);
  const queue = [...scenarios];
  const failures: string[] = [];
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const failure = await runScenario(next);
      if (failure !== undefined) failures.push(failure);
    }
  }));
  ok(failures.length === 0, failures.join("\n\n"));
});
