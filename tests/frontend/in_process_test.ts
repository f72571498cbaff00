import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { InProcessBridge } from "./in_process.ts";
import { server } from "../fixtures/modern_server.ts";
import { MODERN_SERVER } from "../process/helpers.ts";

for (const [name, upstream] of [["memory link", server], ["stdio child", MODERN_SERVER]] as const) {
  Deno.test(`in process (${name}): the flags of the command line, a call, the log, the exit`, async () => {
    await using bridge = new InProcessBridge(["--log-level", "debug"], upstream);
    const init = await bridge.initialize();
    strictEqual((init.result as { serverInfo: { name: string } }).serverInfo.name, "fixture-2026");
    await bridge.request(1, "tools/call", { name: "echo", arguments: { text: "hi" } });
    const response = await bridge.response(1);
    deepStrictEqual(response.result, { content: [{ type: "text", text: "hi" }] });
    await bridge.send({ jsonrpc: "2.0", method: "notifications/no_such_one" });
    strictEqual(await bridge.exit(), 0);
    ok(bridge.stderr.includes("ignored the notification notifications/no_such_one"), bridge.stderr);
    ok(bridge.stderr.startsWith("[mcp-bridge-vscode]"), bridge.stderr);
  });
}

Deno.test("in process: the limits come from the flags", async () => {
  await using bridge = new InProcessBridge(["--max-in-flight", "1"], server);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "slow", arguments: { ms: 300 } });
  await bridge.request(2, "tools/call", { name: "echo", arguments: { text: "x" } });
  const second = await bridge.response(2);
  ok("error" in second, JSON.stringify(second));
  strictEqual((await bridge.response(1)).id, 1);
});
