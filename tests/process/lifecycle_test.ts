/**
 * What is about the process in the life of a session: the exit codes of the
 * program, the end of its stdin and SIGTERM stopping the real child. The
 * rows of the message table and the steps of initialize are tested in
 * process (tests/frontend/frontend_test.ts).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertIncludes } from "../assert.ts";
import { BridgeProcess, DENO, MODERN_SERVER, programArgs } from "./helpers.ts";
import { waitFor } from "../wait.ts";

Deno.test("the end of the input cancels requests in flight without responses and stops the child; exit 0", async () => {
  await using bridge = new BridgeProcess(["--", ...MODERN_SERVER]);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "slow", arguments: { ms: 10000 } });
  await waitFor("the slow call upstream", () => bridge.stderr.includes("fixture: slow started"));
  const started = Date.now();
  strictEqual(await bridge.exit(), 0);
  deepStrictEqual(await bridge.rest(1000), []);
  const took = Date.now() - started;
  ok(took < 8000, `the end took ${took} ms`);
  assertIncludes(bridge.stderr, "slow canceled: the client closed the connection");
});

Deno.test("exit code 2 for arguments that are not valid, with a one-line reason and a pointer to --help", async (t) => {
  for (
    const args of [[], ["--log-level", "loud", "--", "x"], ["--discover-timeout", "0", "--", "x"], [
      "--bogus",
      "--",
      "x",
    ]]
  ) {
    await t.step(args.join(" ") || "(none)", async () => {
      const out = await new Deno.Command(DENO, {
        args: programArgs(args),
        stdout: "piped",
        stderr: "piped",
      })
        .output();
      strictEqual(out.code, 2);
      strictEqual(out.stdout.length, 0);
      const stderr = new TextDecoder().decode(out.stderr);
      assertIncludes(stderr, "Run 'mcp-bridge-vscode --help' for the usage.");
      strictEqual(stderr.includes("Usage:"), false, stderr);
    });
  }
});

Deno.test("SIGTERM ends the session as the end of the input does: the child stops too", async () => {
  await using bridge = new BridgeProcess(["--", ...MODERN_SERVER]);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "slow", arguments: { ms: 10000 } });
  await waitFor("the slow call upstream", () => bridge.stderr.includes("fixture: slow started"));
  bridge.child.kill("SIGTERM");
  const status = await bridge.child.status;
  strictEqual(status.code, 0);
  deepStrictEqual(await bridge.rest(1000), []);
  await bridge.exit();
  // The upstream got the cancel, so it was still running and got its stop from the bridge.
  assertIncludes(bridge.stderr, "slow canceled: the client closed the connection");
});
