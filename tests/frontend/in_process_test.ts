import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { InProcessBridge } from "./in_process.ts";
import { server } from "../fixtures/modern_server.ts";
import { DENO, MODERN_SERVER, ROOT } from "../process/helpers.ts";
import { serveSdk } from "../fixtures/http_upstream.ts";

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

Deno.test("in process: a URL upstream over the HTTP link of the real wiring", async () => {
  await using upstream = serveSdk("/mcp");
  await using bridge = new InProcessBridge([], upstream.url);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "echo", arguments: { text: "over http" } });
  deepStrictEqual((await bridge.response(1)).result, {
    content: [{ type: "text", text: "over http" }],
  });
});

Deno.test("in process: --protocol auto in front of a server of revision 2025-11-25", async () => {
  await using bridge = new InProcessBridge(["--protocol", "auto"], [
    DENO,
    "run",
    "-A",
    `${ROOT}tests/fixtures/legacy_server.ts`,
  ]);
  const init = await bridge.initialize();
  strictEqual((init.result as { serverInfo: { name: string } }).serverInfo.name, "legacy-2025");
  await bridge.request(1, "tools/call", { name: "hello", arguments: {} });
  deepStrictEqual((await bridge.response(1)).result, {
    content: [{ type: "text", text: "hello" }],
  });
});
