import { deepStrictEqual } from "node:assert/strict";
import { applyResultRules, type ResultContext } from "../../lib/translate/results.ts";
import type { Quirks } from "../../lib/settings/profile.ts";
import type { Json } from "../../lib/jsonrpc/message.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { type Logger, SILENT_LOGGER } from "../../lib/log.ts";

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
