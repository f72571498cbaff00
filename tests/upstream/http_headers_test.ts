/**
 * The headers that the HTTP link mirrors from each message; and the
 * `Mcp-Param` headers of a tools/call that the bridge (`InProcessBridge`)
 * sends to a raw upstream.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { result, serveMcp, sse } from "../fixtures/http_raw.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { SECRET_ARGS, SECRET_ENV } from "./http_link_helpers.ts";
import {
  encodeHeaderValue,
  mirroredHeaders,
  paramHeadersOf,
} from "../../lib/upstream/http_headers.ts";

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };

Deno.test("headers: version, method and name of a request; only the version for a notification", () => {
  deepStrictEqual(
    mirroredHeaders({
      jsonrpc: "2.0",
      id: 1,
      method: "resources/read",
      params: { uri: "file:///a b", _meta: META },
    }, () => undefined),
    [
      ["mcp-protocol-version", "2026-07-28"],
      ["mcp-method", "resources/read"],
      ["mcp-name", "file:///a b"],
    ],
  );
  deepStrictEqual(
    mirroredHeaders({ jsonrpc: "2.0", method: "notifications/cancelled", params: {} }, () => []),
    [["mcp-protocol-version", "2026-07-28"]],
  );
  deepStrictEqual(
    mirroredHeaders({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, () => []),
    [["mcp-protocol-version", "2026-07-28"], ["mcp-method", "tools/list"]],
  );
});

Deno.test("headers: a value that is not plain ASCII goes as Base64 of its UTF-8", () => {
  strictEqual(encodeHeaderValue("plain value"), "plain value");
  strictEqual(encodeHeaderValue(" lead"), `=?base64?${btoa(" lead")}?=`);
  strictEqual(encodeHeaderValue(""), "=?base64??=");
  strictEqual(encodeHeaderValue("=?base64?x?="), `=?base64?${btoa("=?base64?x?=")}?=`);
  strictEqual(encodeHeaderValue("日本"), "=?base64?5pel5pys?=");
});

Deno.test("headers: x-mcp-header declarations on the properties chain; an invalid schema gives none", () => {
  const schema = {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      n: { type: "integer", "x-mcp-header": "N" },
      obj: { type: "object", properties: { on: { type: "boolean", "x-mcp-header": "On" } } },
    },
  };
  deepStrictEqual(paramHeadersOf(schema), [
    { path: ["region"], name: "Region" },
    { path: ["n"], name: "N" },
    { path: ["obj", "on"], name: "On" },
  ]);
  deepStrictEqual(
    paramHeadersOf({ type: "object", properties: { x: { type: "number", "x-mcp-header": "X" } } }),
    [],
  );
  deepStrictEqual(
    paramHeadersOf({
      type: "object",
      properties: {
        a: { type: "string", "x-mcp-header": "Dup" },
        b: { type: "string", "x-mcp-header": "dup" },
      },
    }),
    [],
  );
  const headers = mirroredHeaders({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "t", arguments: { region: "é", n: 2 ** 60, obj: { on: false } }, _meta: META },
  }, (tool) => tool === "t" ? paramHeadersOf(schema) : undefined);
  deepStrictEqual(headers.slice(2), [
    ["mcp-name", "t"],
    ["mcp-param-Region", "=?base64?w6k=?="],
    ["mcp-param-On", "false"],
  ]);
});

Deno.test("http: tools/call of a tool with x-mcp-header gets the Mcp-Param headers", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method === "tools/list") {
      return result(m, {
        tools: [{
          name: "route",
          inputSchema: {
            type: "object",
            properties: {
              region: { type: "string", "x-mcp-header": "Region" },
              n: { type: "integer", "x-mcp-header": "Count" },
              deep: {
                type: "object",
                properties: { flag: { type: "boolean", "x-mcp-header": "Flag" } },
              },
            },
          },
        }],
      });
    }
    if (m.method === "tools/call") {
      return sse([{ jsonrpc: "2.0", id: m.id, result: { content: [] } }]);
    }
  });
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  await bridge.response(1);
  await bridge.request(2, "tools/call", {
    name: "route",
    arguments: { region: "eu west", n: 3, deep: { flag: true } },
  });
  deepStrictEqual((await bridge.response(2)).result, { content: [] });
  const call = upstream.seen.find((r) => r.headers.get("mcp-method") === "tools/call")!;
  strictEqual(call.headers.get("mcp-name"), "route");
  strictEqual(call.headers.get("mcp-param-region"), "eu west");
  strictEqual(call.headers.get("mcp-param-count"), "3");
  strictEqual(call.headers.get("mcp-param-flag"), "true");
  strictEqual(await bridge.exit(), 0);
});
