/**
 * The URL upstream of the command line (`lib/upstream/http_options.ts`,
 * REMOTE.md) over the wire, with the bridge in the test's own process
 * (`tests/frontend/in_process.ts`: the real parser and wiring): the headers
 * of `--header-env`, the plain http URLs that are allowed, a refused
 * connection. The exit 2 of what is not valid is in tests/cli/run_test.ts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveMcp } from "../fixtures/http_raw.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { freePort } from "../free_port.ts";

function assertClean(text: string): void {
  for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
    ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
  }
}

/** The bridge of `args` in front of `url`; `--header-env` reads its variables from `env`. */
function bridgeWithEnv(args: string[], url: string, env: Record<string, string>): InProcessBridge {
  return new InProcessBridge(args, url, { env });
}

Deno.test("http: --header-env values with Latin-1 characters or a tab are accepted and sent", async () => {
  await using upstream = serveMcp(() => undefined);
  await using bridge = bridgeWithEnv(
    ["--header-env", "X-Latin=T25_LATIN_VALUE", "--header-env", "Authorization=T25_AUTH_VALUE"],
    upstream.url,
    { T25_LATIN_VALUE: "Caf\u00e9\tna\u00efve", T25_AUTH_VALUE: "Bearer abc" },
  );
  const init = await bridge.initialize();
  ok("result" in init, JSON.stringify(init));
  const headers = upstream.seen[0]!.headers;
  strictEqual(headers.get("x-latin"), "Caf\u00e9\tna\u00efve");
  strictEqual(headers.get("authorization"), "Bearer abc");
  strictEqual(await bridge.exit(), 0);
});

Deno.test("cli: --allow-http accepts a plain http URL; a loopback http URL needs no flag", async () => {
  for (
    const [options, url] of [
      [["--allow-http"], "http://example.invalid/mcp"],
      [[], "http://127.0.0.1:9/mcp"],
      [[], "http://localhost:9/mcp"],
      [[], "http://[::1]:9/mcp"],
    ] as const
  ) {
    await using bridge = new InProcessBridge([...options], url);
    strictEqual(await bridge.exit(), 0, `${[...options, url].join(" ")}: ${bridge.stderr}`);
  }
});

Deno.test("http: a refused connection gives discover_failed with 'the connection failed'", async () => {
  // A port with no server.
  const port = freePort();
  await using bridge = new InProcessBridge(
    [],
    `http://127.0.0.1:${port}/mcp/secret-path?key=sekrit-query`,
  );
  const init = await bridge.initialize();
  deepStrictEqual((init.error as { data: unknown }).data, {
    cause: "discover_failed",
    detail: "the connection failed",
  });
  strictEqual(await bridge.exit(), 0);
  // Every message of the bridge (its stdout) and its log (its stderr).
  const stdout = [init, ...await bridge.rest()].map((m) => JSON.stringify(m)).join("\n");
  assertClean(stdout + bridge.stderr);
});
