/**
 * The log line of a failed initialize, from the real program: it names the
 * cause and the detail of the client's error, and never the URL's path or
 * query, a header value or the arguments of the command.
 */

import { strictEqual } from "node:assert/strict";
import { serveMcp } from "../fixtures/http_raw.ts";
import { assertExcludes, assertIncludes } from "../assert.ts";
import { DENO, INITIALIZE_REQUEST, programArgs, ROOT } from "./helpers.ts";

const dec = new TextDecoder();

/** Runs the bridge with `args`, sends initialize, ends the input; its stdout and stderr. */
async function initializeOnce(args: string[], env: Record<string, string> = {}) {
  const child = new Deno.Command(DENO, {
    args: programArgs(args),
    cwd: ROOT,
    // No proxy of the test's environment: the bridge's own client talks to the loopback server.
    env: { HTTP_PROXY: "", http_proxy: "", HTTPS_PROXY: "", https_proxy: "", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(
    JSON.stringify(INITIALIZE_REQUEST) + "\n",
  ));
  // The answer comes before the end of the input is read: wait for it, then close.
  const reader = child.stdout.getReader();
  let stdout = "";
  while (!stdout.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += dec.decode(value);
  }
  reader.releaseLock();
  await writer.close();
  const out = await child.output();
  return { stdout, stderr: dec.decode(out.stderr), code: out.code };
}

Deno.test("initialize log: a v1 SDK upstream (no server/discover) logs discover_failed: Method not found", async () => {
  const out = await initializeOnce([
    "--",
    DENO,
    "run",
    "-A",
    `${ROOT}tests/fixtures/legacy_server.ts`,
    "--v4lue-s3cr3t",
  ]);
  strictEqual(JSON.parse(out.stdout).error.data.cause, "discover_failed");
  assertIncludes(
    out.stderr,
    "[mcp-bridge-vscode] error: initialize failed: discover_failed: Method not found\n",
  );
  assertExcludes(out.stderr, "v4lue-s3cr3t");
});

Deno.test("initialize log: a URL upstream that answers 404 logs the status, never its path, query or header", async () => {
  await using upstream = serveMcp(() => new Response("nope", { status: 404 }));
  const out = await initializeOnce(["--header-env", "X-Key=K", upstream.url], {
    K: "v4lue-s3cr3t",
  });
  assertIncludes(
    out.stderr,
    "[mcp-bridge-vscode] error: initialize failed: discover_failed: HTTP status 404\n",
  );
  for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t", "127.0.0.1"]) {
    assertExcludes(out.stderr, secret);
  }
});
