/**
 * A proxy that refuses the upstream's domain, as VS Code's sandbox (srt)
 * refuses one that is not in `sandbox.network.allowedDomains`: the real
 * program behind a refusing proxy of the test (`HTTPS_PROXY`/`HTTP_PROXY`).
 * `sandbox_test.ts` does the same under the real srt where it can run.
 */

import { ok, strictEqual } from "node:assert/strict";
import { BridgeProcess } from "./helpers.ts";
import { refusingProxy } from "../fixtures/refusing_proxy.ts";

for (const scheme of ["https", "http"] as const) {
  Deno.test(`process: a ${scheme} upstream that the sandbox's proxy refuses fails initialize at once with discover_failed, the proxy's detail and one warn line with the rule`, async () => {
    const proxy = refusingProxy();
    try {
      const variable = scheme === "https" ? "HTTPS_PROXY" : "HTTP_PROXY";
      await using bridge = new BridgeProcess(
        [
          ...(scheme === "http" ? ["--allow-http"] : []),
          `${scheme}://mcp.example.com/mcp/secret-path`,
        ],
        { [variable]: proxy.url, SANDBOX_RUNTIME: "1", DENO_NO_UPDATE_CHECK: "1" },
      );
      const started = performance.now();
      const response = await bridge.initialize();
      const elapsed = performance.now() - started;
      const error = response.error as { data: { cause: string; detail: string } };
      strictEqual(error.data.cause, "discover_failed");
      strictEqual(
        error.data.detail,
        scheme === "https"
          ? "the proxy refused the connection"
          : "the proxy refused the connection (HTTP status 403)",
      );
      // At once: far below --discover-timeout (60 s), which a wait for the refused host would
      // reach (a bound for a loaded machine, not a speed figure).
      ok(elapsed < 20_000, `${elapsed} ms`);
      await bridge.request(2, "ping");
      strictEqual(JSON.stringify((await bridge.response(2)).result), "{}");
      // (Deno's own update check may go through the proxy too.)
      const ours = proxy.refused.filter((line) => line.includes("mcp.example.com"));
      strictEqual(ours.length, 1, `one request, never sent again: ${proxy.refused.join(", ")}`);
      await bridge.closeInput();
      await bridge.exit();
      const warns = bridge.stderr.split("\n").filter((line) => line.includes("refused"));
      const rule = 'add "mcp.example.com" to sandbox.network.allowedDomains in mcp.json';
      strictEqual(warns.filter((line) => line.includes(rule)).length, 1, bridge.stderr);
      ok(!bridge.stderr.includes("secret-path"), bridge.stderr);
    } finally {
      proxy.close();
    }
  });
}
