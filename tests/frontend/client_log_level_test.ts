/** The level of the client (M3) on the wire: the bridge of the command line in process. */

import { deepStrictEqual } from "node:assert/strict";
import { server } from "../fixtures/modern_server.ts";
import { InProcessBridge } from "./in_process.ts";

Deno.test("logging: no level, no messages; after setLevel, messages at or above it, without _meta", async () => {
  await using bridge = new InProcessBridge([], server);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "log", arguments: { level: "error" } });
  deepStrictEqual((await bridge.next())?.id, 2);
  await bridge.request(3, "logging/setLevel", { level: "warning" });
  deepStrictEqual((await bridge.next())?.id, 3);
  await bridge.request(4, "tools/call", { name: "log", arguments: { level: "info", note: "low" } });
  deepStrictEqual((await bridge.next())?.id, 4);
  await bridge.request(5, "tools/call", {
    name: "log",
    arguments: { level: "error", note: "high" },
  });
  deepStrictEqual(await bridge.next(), {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "error", data: { note: "high" }, logger: "fixture" },
  });
  deepStrictEqual((await bridge.next())?.id, 5);
});
