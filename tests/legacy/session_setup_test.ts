/**
 * What a new session restores: the first initialize's params, the level of
 * the last logging/setLevel that succeeded, and the subscriptions that
 * succeeded and were not undone; a request that failed changes nothing.
 */

import { deepStrictEqual } from "node:assert/strict";
import { SessionSetup } from "../../lib/legacy/session_setup.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";

const request = (id: number, method: string, params: JsonObject): JsonObject => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
const ok = (id: number): JsonObject => ({ jsonrpc: "2.0", id, result: {} });
const error = (id: number): JsonObject => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32602, message: "no" },
});

Deno.test("SessionSetup: the changes that succeeded, in order; failed ones and errors change nothing", () => {
  const setup = new SessionSetup();
  setup.sent(request(1, "initialize", { protocolVersion: "2025-11-25" }));
  setup.sent(request(2, "initialize", { protocolVersion: "other" }));
  const steps: [JsonObject, JsonObject | "failed"][] = [
    [request(3, "logging/setLevel", { level: "info" }), ok(3)],
    [request(4, "logging/setLevel", { level: "error" }), error(4)],
    [request(5, "logging/setLevel", { level: "debug" }), "failed"],
    [request(6, "resources/subscribe", { uri: "a" }), ok(6)],
    [request(7, "resources/subscribe", { uri: "b" }), ok(7)],
    [request(8, "resources/subscribe", { uri: "c" }), error(8)],
    [request(9, "resources/unsubscribe", { uri: "a" }), ok(9)],
    [request(10, "resources/unsubscribe", { uri: "b" }), "failed"],
    [request(11, "tools/call", { name: "x" }), ok(11)],
  ];
  for (const [sent, answer] of steps) {
    setup.sent(sent);
    if (answer === "failed") setup.failed(sent.id!);
    else setup.answered(answer);
  }
  deepStrictEqual(setup.initializeParams, { protocolVersion: "2025-11-25" });
  deepStrictEqual(setup.restore(), [
    { method: "logging/setLevel", params: { level: "info" } },
    { method: "resources/subscribe", params: { uri: "b" } },
  ]);
});
