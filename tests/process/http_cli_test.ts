/**
 * The command line of a URL upstream (REMOTE.md): exit 2 for what is not
 * valid, with a reason that names the flag, the variable or the file and
 * never a value, the URL path or the query.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { runBridge, UrlBridge } from "../fixtures/http_bridge.ts";
import { serveMcp } from "../fixtures/http_raw.ts";
import { HELP_POINTER } from "../../lib/cli/usage.ts";

const SECRET_URL = "https://example.invalid/mcp/secret-path?key=sekrit-query";

function assertClean(text: string): void {
  for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
    ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
  }
}

Deno.test("cli: a missing variable of --header-env is exit 2 and names the variable", async () => {
  const out = await runBridge(["--header-env", "Authorization=NO_SUCH_VARIABLE", SECRET_URL]);
  strictEqual(out.code, 2);
  ok(out.stderr.includes("NO_SUCH_VARIABLE"), out.stderr);
  ok(out.stderr.endsWith(HELP_POINTER), out.stderr);
  assertClean(out.stdout + out.stderr);
});

Deno.test("cli: URLs and flags that are not valid are exit 2 without the URL in the reason", async () => {
  const cases: [string[], string, Record<string, string>?][] = [
    [["http://example.invalid/mcp/secret-path?key=sekrit-query"], "loopback"],
    [["ftp://example.invalid/mcp/secret-path?key=sekrit-query"], "scheme"],
    [["https://user:v4lue-s3cr3t@example.invalid/mcp/secret-path"], "user name"],
    [["--header-env", "Bad Name=X", SECRET_URL], "NAME=VARIABLE"],
    [["--header-env", "Mcp-Method=X", SECRET_URL], "Mcp-Method", { X: "v4lue-s3cr3t" }],
    [["--header-env", "X-Key=X", SECRET_URL], "not a valid header value", {
      X: "v4lue-s3cr3t\nInjected: 1",
    }],
    [["--max-response-bytes", "0", SECRET_URL], "--max-response-bytes"],
    [["--ca-file", "/no/such/file.pem", SECRET_URL], "/no/such/file.pem"],
    [["--ca-file", "deno.json", SECRET_URL], "no PEM certificate"],
    [["--ca-file", "x.pem", "--", "some-command"], "needs an upstream server at a URL"],
    [[SECRET_URL, "extra"], "no arguments after the URL"],
  ];
  for (const [args, reason, env] of cases) {
    const out = await runBridge(args, env);
    strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    ok(out.stderr.includes(reason), `${args.join(" ")}: ${out.stderr}`);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("cli: an argument parseArgs refuses is exit 2 with a reason of ours, no URL or value", async () => {
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
    const out = await runBridge(args);
    strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    strictEqual(out.stdout, "");
    const [first, ...rest] = out.stderr.split("\n");
    ok(first!.startsWith("[mcp-bridge-vscode] error: "), first);
    ok(first!.includes(reason), `${args.join(" ")}: ${first}`);
    strictEqual(rest.join("\n"), HELP_POINTER);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("cli: a value that is not valid is exit 2 with a reason that does not repeat it", async () => {
  const cases: string[][] = [
    ["--log-level", "v4lue-s3cr3t", SECRET_URL],
    ["--max-response-bytes", "v4lue-s3cr3t", SECRET_URL],
    ["--sign-in-timeout", "v4lue-s3cr3t", SECRET_URL],
    ["--redirect-port", "v4lue-s3cr3t", SECRET_URL],
    ["logout", SECRET_URL, "--bogus=v4lue-s3cr3t"],
    ["logout", SECRET_URL, "--token-store"],
  ];
  for (const args of cases) {
    const out = await runBridge(args);
    strictEqual(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
    ok(out.stderr.startsWith("[mcp-bridge-vscode] error: "), out.stderr);
    assertClean(out.stdout + out.stderr);
  }
});

Deno.test("cli: a --header-env value that HTTP cannot send is exit 2, names the variable only", async () => {
  for (const value of ["€uro", "a\x01b", "a\x7fb", "\tv4lue-s3cr3t\u2028"]) {
    const out = await runBridge(["--header-env", "X-Key=HEADER_VALUE", SECRET_URL], {
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

Deno.test("http: --header-env values with Latin-1 characters or a tab are accepted and sent", async () => {
  await using upstream = serveMcp(() => undefined);
  await using bridge = new UrlBridge([
    "--header-env",
    "X-Latin=LATIN_VALUE",
    "--header-env",
    "Authorization=AUTH_VALUE",
    upstream.url,
  ], { LATIN_VALUE: "Caf\u00e9\tna\u00efve", AUTH_VALUE: "Bearer abc" });
  const init = await bridge.initialize();
  ok("result" in init, JSON.stringify(init));
  const headers = upstream.seen[0]!.headers;
  strictEqual(headers.get("x-latin"), "Caf\u00e9\tna\u00efve");
  strictEqual(headers.get("authorization"), "Bearer abc");
  strictEqual(await bridge.exit(), 0);
});

Deno.test("cli: --allow-http accepts a plain http URL; a loopback http URL needs no flag", async () => {
  for (
    const args of [
      ["--allow-http", "http://example.invalid/mcp"],
      ["http://127.0.0.1:9/mcp"],
      ["http://localhost:9/mcp"],
      ["http://[::1]:9/mcp"],
    ]
  ) {
    const out = await runBridge(args);
    strictEqual(out.code, 0, `${args.join(" ")}: ${out.stderr}`);
  }
});

Deno.test("cli: --help shows the URL form and the HTTP flags", async () => {
  const out = await runBridge(["--help"]);
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

Deno.test("http: a proxy variable that is not a URL gives connect_failed; nothing is sent", async () => {
  await using upstream = serveMcp(() => undefined);
  await using bridge = new UrlBridge([upstream.url], { HTTP_PROXY: "http://[not a proxy" });
  const init = await bridge.initialize();
  deepStrictEqual((init.error as { data: unknown }).data, { cause: "connect_failed" });
  strictEqual(upstream.seen.length, 0);
  strictEqual(await bridge.exit(), 0);
  assertClean(bridge.stdout + bridge.stderr);
});

Deno.test("http: a refused connection gives discover_failed with 'the connection failed'", async () => {
  // A port with no server: take one and close it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using bridge = new UrlBridge([`http://127.0.0.1:${port}/mcp/secret-path?key=sekrit-query`]);
  const init = await bridge.initialize();
  deepStrictEqual((init.error as { data: unknown }).data, {
    cause: "discover_failed",
    detail: "the connection failed",
  });
  strictEqual(await bridge.exit(), 0);
  assertClean(bridge.stdout + bridge.stderr);
});
