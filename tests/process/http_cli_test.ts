/**
 * The command line of a URL upstream (REMOTE.md) in the real program: exit 2
 * for a URL or a flag that is not valid, with a reason that names the flag
 * and never a value, the URL path or the query; a proxy variable of the
 * process's environment. Every row of URLs, flags, values and `--header-env`
 * runs in the test's own process (tests/cli/run_test.ts); the headers, the
 * http URLs and a refused connection over the wire in
 * tests/upstream/http_options_test.ts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveMcp } from "../fixtures/http_raw.ts";
import { HELP_POINTER } from "../../lib/cli/usage.ts";
import { BridgeProcess, runBridge } from "./helpers.ts";

const SECRET_URL = "https://example.invalid/mcp/secret-path?key=sekrit-query";

function assertClean(text: string): void {
  for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
    ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
  }
}

/** Exit 2, nothing on stdout, the reason line, then the pointer to --help; no secret anywhere. */
async function assertUsage(args: string[], reason: string): Promise<void> {
  const out = await runBridge(args);
  strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
  strictEqual(out.stdout, "");
  const [first, ...rest] = out.stderr.split("\n");
  ok(first!.startsWith("[mcp-bridge-vscode] error: "), first);
  ok(first!.includes(reason), `${args.join(" ")}: ${first}`);
  strictEqual(rest.join("\n"), HELP_POINTER);
  assertClean(out.stdout + out.stderr);
}

Deno.test("cli: a URL that is not valid is exit 2 without the URL in the reason", async () => {
  await assertUsage(["http://example.invalid/mcp/secret-path?key=sekrit-query"], "loopback");
});

Deno.test("cli: a flag that parseArgs refuses is exit 2 with a reason of ours, no URL or value", async () => {
  await assertUsage(["--bogus=v4lue-s3cr3t", SECRET_URL], "the option --bogus is not known");
});

Deno.test("http: a proxy variable that is not a URL gives connect_failed; nothing is sent", async () => {
  await using upstream = serveMcp(() => undefined);
  await using bridge = new BridgeProcess([upstream.url], { HTTP_PROXY: "http://[not a proxy" });
  const init = await bridge.initialize();
  deepStrictEqual((init.error as { data: unknown }).data, { cause: "connect_failed" });
  strictEqual(upstream.seen.length, 0);
  strictEqual(await bridge.exit(), 0);
  assertClean(bridge.stdout + bridge.stderr);
});
