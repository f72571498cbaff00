/** The log level of the client: logging/setLevel, and the log messages it lets through. */

import { deepStrictEqual } from "node:assert/strict";
import { logMessageFor, setLevelParams } from "../../lib/frontend/client_log_level.ts";

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
