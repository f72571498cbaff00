/** The headers that the HTTP link mirrors from each message. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
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
