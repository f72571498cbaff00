/** Which requests are repeatable: by their method, or by the hints of the last tools/list. */

import { strictEqual } from "node:assert/strict";
import { isRepeatable, REPEATABLE_METHODS, ToolHints } from "../../lib/http/repeatable.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";

const request = (method: string, params: JsonObject = {}): JsonObject => ({
  jsonrpc: "2.0",
  id: 1,
  method,
  params,
});

Deno.test("repeatable: the methods that change nothing, and no other", () => {
  for (const method of REPEATABLE_METHODS) {
    strictEqual(isRepeatable(request(method), undefined), true);
  }
  for (const method of ["tools/call", "resources/subscribe", "logging/setLevel", "initialize"]) {
    strictEqual(isRepeatable(request(method, { name: "x" }), new ToolHints()), false, method);
  }
  // A notification is no request: nothing answers it, nothing goes once more.
  strictEqual(isRepeatable({ jsonrpc: "2.0", method: "ping" }, undefined), false);
});

Deno.test("repeatable: a tools/call by the hints of the last list; a tool that loses its hint is no longer repeatable", () => {
  const hints = new ToolHints();
  const call = (name: string) => request("tools/call", { name });
  hints.learn({
    tools: [
      { name: "search", annotations: { readOnlyHint: true } },
      { name: "put", annotations: { idempotentHint: true } },
      { name: "rm", annotations: { destructiveHint: true, readOnlyHint: false } },
      { name: "plain" },
    ],
  });
  strictEqual(isRepeatable(call("search"), hints), true);
  strictEqual(isRepeatable(call("put"), hints), true);
  strictEqual(isRepeatable(call("rm"), hints), false);
  strictEqual(isRepeatable(call("plain"), hints), false);
  strictEqual(isRepeatable(call("unknown"), hints), false);
  // A later page or list that shows the tool without its hint.
  hints.learn({ tools: [{ name: "search", annotations: { title: "Search" } }] });
  strictEqual(isRepeatable(call("search"), hints), false);
  // Only `true` counts: a hint of another type is no promise.
  hints.learn({ tools: [{ name: "put", annotations: { idempotentHint: "true" } }] });
  strictEqual(isRepeatable(call("put"), hints), false);
  // --no-hinted-resend: no hints at all.
  strictEqual(isRepeatable(call("search"), undefined), false);
});
