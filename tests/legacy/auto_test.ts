/**
 * `--protocol auto` (lib/legacy/auto.ts) on the wire: the bridge of the
 * command line in process in front of a raw server of revision 2025-11-25 (a
 * child): which failures of server/discover mean an older server, and the
 * start again of a child that the probe ended.
 */

import { isOlderHttp, isOlderStdio } from "../../lib/legacy/auto.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { ok, strictEqual } from "node:assert/strict";
import { InProcessBridge } from "../frontend/in_process.ts";
import { CLIENT_CAPABILITIES, LEGACY_RAW } from "./legacy_raw.ts";

type Json = Record<string, unknown>;

Deno.test("auto: -32600 not initialized is an older server; a probe that ended the child starts it again once", async () => {
  for (const mode of ["not_initialized", "exit_after_probe"]) {
    await using bridge = new InProcessBridge(["--protocol", "auto"], LEGACY_RAW(mode));
    const init = await bridge.initialize(CLIENT_CAPABILITIES, true);
    strictEqual((init.result as Json).protocolVersion, "2025-06-18", mode);
    await bridge.request("l", "tools/list");
    ok((await bridge.response("l")).result, mode);
    strictEqual(await bridge.exit(), 0);
    ok(bridge.stderr.includes("info: revision 2025-11-25"), bridge.stderr);
    strictEqual(bridge.stderr.includes("starts again"), mode === "exit_after_probe", bridge.stderr);
  }
});

Deno.test("auto: any other failure of server/discover stays discover_failed; the default is 2026-07-28", async () => {
  for (
    const [options, mode] of [
      [["--protocol", "auto"], "other_error"],
      [[], "method_not_found"],
      [["--protocol", "2026-07-28"], "method_not_found"],
    ] as const
  ) {
    await using bridge = new InProcessBridge([...options], LEGACY_RAW(mode));
    const init = await bridge.initialize(CLIENT_CAPABILITIES);
    strictEqual(((init.error as Json).data as Json).cause, "discover_failed", mode);
    strictEqual(await bridge.exit(), 0);
  }
});

Deno.test("isOlderStdio: -32601 of server/discover is an older server", () => {
  const failure = new UpstreamFailure("rpc", {
    error: { code: -32601, message: "Method not found" },
  });
  ok(isOlderStdio(failure));
});

Deno.test("isOlderHttp: a 400 with a JSON-RPC error body is an older server; a bare 404 is not", () => {
  ok(
    isOlderHttp(
      new UpstreamFailure("transport_failed", { status: 400, errorBody: "jsonrpc_error" }),
    ),
  );
  ok(!isOlderHttp(new UpstreamFailure("transport_failed", { status: 404 })));
});
