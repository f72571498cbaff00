/** The log level of the client: logging/setLevel, and the log messages it lets through (also on the wire). */

import { deepStrictEqual } from "node:assert/strict";
import { logMessageFor, setLevelParams } from "../../lib/frontend/client_log_level.ts";
import { server } from "../fixtures/modern_server.ts";
import { InProcessBridge } from "./in_process.ts";

Deno.test("log messages: none without a level of the client or below it; no upstream _meta", () => {
  const params = { level: "warning", logger: "l", data: { a: 1 }, _meta: { x: 1 } };
  deepStrictEqual(logMessageFor(params, undefined), undefined);
  deepStrictEqual(logMessageFor(params, "error"), undefined);
  deepStrictEqual(logMessageFor(params, "info"), { level: "warning", data: { a: 1 }, logger: "l" });
  deepStrictEqual(logMessageFor({ level: "loud", data: 1 }, "debug"), undefined);
});

Deno.test("setLevel params: a level of the table, nothing else", () => {
  deepStrictEqual([
    setLevelParams({ level: "warning" }),
    setLevelParams({ level: "warn" }),
    setLevelParams(1),
  ], [
    "warning",
    undefined,
    undefined,
  ]);
});

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
