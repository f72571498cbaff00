/**
 * The server scenarios of `@modelcontextprotocol/conformance` that revision
 * 2025-11-25 requires (`--requirements 2025-11-25`), run directly against
 * `mcp-bridge-vscode serve` in front of an SDK v2 server of revision
 * 2026-07-28 (`tests/fixtures/conformance_upstream.ts`): the HTTP face
 * itself (sessions, SSE, DNS rebinding) and every rule of the bridge behind
 * it (sampling and elicitation as input rounds, log messages, progress).
 */

import { ok } from "node:assert/strict";
import { conformance } from "./run_cli.ts";
import { CONFORMANCE_UPSTREAM, ServeProcess } from "../process/serve_helpers.ts";

Deno.test("conformance: the server scenarios of revision 2025-11-25 pass against serve", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const out = await Deno.makeTempDir({ prefix: "serve-conformance-" });
  try {
    const output = await conformance([
      "server",
      "--url",
      serve.url().href,
      "--requirements",
      "2025-11-25",
      "-o",
      out,
    ]);
    const total = /Total: (\d+) passed, (\d+) failed/.exec(output);
    ok(total && Number(total[1]) > 50 && total[2] === "0", output.slice(-4000));
    ok(!/✗/.test(output), output.slice(-4000));
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
