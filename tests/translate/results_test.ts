/**
 * The result rules; and the icon rule data_only of a remote upstream through
 * the bridge (`InProcessBridge`, the real wiring of the command line) over
 * HTTP: serverInfo, the four lists, resource links of tools/call and
 * prompts/get results.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { applyResultRules, type ResultContext } from "../../lib/translate/results.ts";
import type { Quirks } from "../../lib/settings/profile.ts";
import type { Json } from "../../lib/jsonrpc/message.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { type Logger, SILENT_LOGGER } from "../../lib/log.ts";
import { result, serveMcp } from "../fixtures/http_raw.ts";
import { InProcessBridge } from "../frontend/in_process.ts";

function ctx(
  quirks: Partial<Quirks> = {},
  icons: "all" | "data_only" = "all",
  log: Logger = SILENT_LOGGER,
): ResultContext {
  return { quirks: { ...VSCODE_PROFILE.quirks, ...quirks }, icons, log };
}

const cases: {
  name: string;
  method: string;
  input: Json;
  output: Json;
  quirks?: Partial<Quirks>;
  icons?: "data_only";
}[] = [
  {
    name: "modern members and the serverInfo key of _meta are removed, and an empty _meta",
    method: "prompts/get",
    input: {
      resultType: "complete",
      ttlMs: 5,
      cacheScope: "private",
      messages: [],
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "x", version: "1" } },
    },
    output: { messages: [] },
  },
  {
    name: "other _meta keys stay",
    method: "resources/read",
    input: {
      contents: [],
      _meta: { "io.modelcontextprotocol/serverInfo": {}, "com.example/k": 1 },
    },
    output: { contents: [], _meta: { "com.example/k": 1 } },
  },
  {
    name: "nextCursor null is removed from a list",
    method: "resources/list",
    input: { resources: [], nextCursor: null },
    output: { resources: [] },
  },
  {
    name: "nextCursor of another type is removed; a string stays",
    method: "prompts/list",
    input: { prompts: [], nextCursor: 3 },
    output: { prompts: [] },
  },
  {
    name: "a string nextCursor stays",
    method: "resources/templates/list",
    input: { resourceTemplates: [], nextCursor: "c2" },
    output: { resourceTemplates: [], nextCursor: "c2" },
  },
  {
    name: "nextCursor outside the four lists stays",
    method: "completion/complete",
    input: { completion: { values: [] }, nextCursor: null },
    output: { completion: { values: [] }, nextCursor: null },
  },
  {
    name: "a non-object outputSchema is removed; an object one stays",
    method: "tools/list",
    input: {
      tools: [
        { name: "a", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
        {
          name: "b",
          inputSchema: { type: "object" },
          outputSchema: { type: "object", properties: {} },
        },
        { name: "c", inputSchema: { type: "object" }, outputSchema: { properties: {} } },
        { name: "d", inputSchema: { type: "object" }, outputSchema: null },
      ],
    },
    output: {
      tools: [
        { name: "a", inputSchema: { type: "object" } },
        {
          name: "b",
          inputSchema: { type: "object" },
          outputSchema: { type: "object", properties: {} },
        },
        { name: "c", inputSchema: { type: "object" } },
        { name: "d", inputSchema: { type: "object" } },
      ],
    },
  },
  {
    name: "without the quirk the outputSchema stays",
    method: "tools/list",
    quirks: { drop_non_object_output_schema: false, normalize_array_items: false },
    input: {
      tools: [{
        name: "a",
        inputSchema: { type: "object", properties: { x: { type: "array" } } },
        outputSchema: { type: "string" },
      }],
    },
    output: {
      tools: [{
        name: "a",
        inputSchema: { type: "object", properties: { x: { type: "array" } } },
        outputSchema: { type: "string" },
      }],
    },
  },
  {
    name: "tools/call without content gets an empty content array and no mirror",
    method: "tools/call",
    input: { isError: false },
    output: { isError: false, content: [] },
  },
  {
    name: "structuredContent gets a text mirror when content has no text block",
    method: "tools/call",
    input: {
      content: [{ type: "image", data: "AA", mimeType: "image/png" }],
      structuredContent: { a: 1 },
    },
    output: {
      content: [{ type: "image", data: "AA", mimeType: "image/png" }, {
        type: "text",
        text: '{"a":1}',
      }],
      structuredContent: { a: 1 },
    },
  },
  {
    name: "a non-object structuredContent is kept and mirrored",
    method: "tools/call",
    input: { structuredContent: [1, "x"] },
    output: { structuredContent: [1, "x"], content: [{ type: "text", text: '[1,"x"]' }] },
  },
  {
    name: "a null structuredContent has no mirror",
    method: "tools/call",
    input: { content: [], structuredContent: null },
    output: { content: [], structuredContent: null },
  },
  {
    name: "no mirror when content has a text block",
    method: "tools/call",
    input: { content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } },
    output: { content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } },
  },
  {
    name: "strict results remove a non-object structuredContent",
    method: "tools/call",
    quirks: { strict_legacy_results: true },
    input: { content: [], structuredContent: 5 },
    output: { content: [] },
  },
  {
    name: "strict results remove non-object output schemas even without the drop quirk",
    method: "tools/list",
    quirks: { strict_legacy_results: true, drop_non_object_output_schema: false },
    input: {
      tools: [{ name: "a", inputSchema: { type: "object" }, outputSchema: { type: "array" } }],
    },
    output: { tools: [{ name: "a", inputSchema: { type: "object" } }] },
  },
  {
    name: "each other member stays",
    method: "tools/call",
    input: { content: [], isError: true, extra: { deep: [1] }, _meta: { "vscode.x": 1 } },
    output: { content: [], isError: true, extra: { deep: [1] }, _meta: { "vscode.x": 1 } },
  },
  {
    name: "remote upstream: list items keep only data: icons",
    method: "tools/list",
    icons: "data_only",
    input: {
      tools: [
        {
          name: "a",
          inputSchema: { type: "object" },
          icons: [{ src: "https://x/i.png" }, { src: "Data:image/png;base64,A" }],
        },
        { name: "b", inputSchema: { type: "object" }, icons: [{ src: "file:///i.png" }] },
      ],
    },
    output: {
      tools: [
        { name: "a", inputSchema: { type: "object" }, icons: [{ src: "Data:image/png;base64,A" }] },
        { name: "b", inputSchema: { type: "object" } },
      ],
    },
  },
  {
    name: "remote upstream: resource links of a tool result keep only data: icons",
    method: "tools/call",
    icons: "data_only",
    input: {
      content: [{ type: "resource_link", uri: "x://1", name: "n", icons: [{ src: "http://i" }] }],
    },
    output: { content: [{ type: "resource_link", uri: "x://1", name: "n" }] },
  },
];

for (const c of cases) {
  Deno.test(`result rule: ${c.name}`, () => {
    deepStrictEqual(
      applyResultRules(c.method, structuredClone(c.input), ctx(c.quirks, c.icons)),
      c.output,
    );
  });
}

const ICONS = [
  { src: "https://example.invalid/i.png" },
  { src: "data:image/png;base64,AAAA", mimeType: "image/png" },
  { src: "file:///tmp/i.png" },
];
const HTTP_ONLY = [{ src: "http://example.invalid/i.png" }];

Deno.test("http icons: only data: icons of a remote server reach the client", async () => {
  await using upstream = serveMcp((m) => {
    switch (m.method) {
      case "server/discover":
        return result(m, {
          resultType: "complete",
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {}, prompts: {}, resources: {} },
          _meta: {
            "io.modelcontextprotocol/serverInfo": { name: "remote", version: "1", icons: ICONS },
          },
        });
      case "tools/list":
        return result(m, {
          tools: [{ name: "a", inputSchema: { type: "object" }, icons: ICONS }, {
            name: "b",
            inputSchema: { type: "object" },
            icons: HTTP_ONLY,
          }],
        });
      case "prompts/list":
        return result(m, { prompts: [{ name: "p", icons: ICONS }] });
      case "resources/list":
        return result(m, { resources: [{ uri: "x://r", name: "r", icons: HTTP_ONLY }] });
      case "resources/templates/list":
        return result(m, {
          resourceTemplates: [{ uriTemplate: "x://{t}", name: "t", icons: ICONS }],
        });
      case "tools/call":
        return result(m, {
          content: [{ type: "resource_link", uri: "x://r", name: "r", icons: ICONS }],
        });
      case "prompts/get":
        return result(m, {
          messages: [
            {
              role: "user",
              content: { type: "resource_link", uri: "x://r", name: "r", icons: HTTP_ONLY },
            },
            {
              role: "user",
              content: { type: "resource_link", uri: "x://s", name: "s", icons: ICONS },
            },
          ],
        });
    }
  });
  await using bridge = new InProcessBridge([], upstream.url);
  const init = await bridge.initialize();
  const data = [{ src: "data:image/png;base64,AAAA", mimeType: "image/png" }];
  deepStrictEqual((init.result as { serverInfo: unknown }).serverInfo, {
    name: "remote",
    version: "1",
    icons: data,
  });
  const get = async (id: number, method: string, params: unknown = {}) => {
    await bridge.request(id, method, params);
    return (await bridge.response(id)).result as Record<string, unknown>;
  };
  deepStrictEqual((await get(1, "tools/list")).tools, [
    { name: "a", inputSchema: { type: "object" }, icons: data },
    { name: "b", inputSchema: { type: "object" } },
  ]);
  deepStrictEqual((await get(2, "prompts/list")).prompts, [{ name: "p", icons: data }]);
  deepStrictEqual((await get(3, "resources/list")).resources, [{ uri: "x://r", name: "r" }]);
  deepStrictEqual((await get(4, "resources/templates/list")).resourceTemplates, [
    { uriTemplate: "x://{t}", name: "t", icons: data },
  ]);
  deepStrictEqual((await get(5, "tools/call", { name: "a" })).content, [
    { type: "resource_link", uri: "x://r", name: "r", icons: data },
  ]);
  deepStrictEqual((await get(6, "prompts/get", { name: "p" })).messages, [
    { role: "user", content: { type: "resource_link", uri: "x://r", name: "r" } },
    { role: "user", content: { type: "resource_link", uri: "x://s", name: "s", icons: data } },
  ]);
  strictEqual(await bridge.exit(), 0);
});
