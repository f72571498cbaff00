import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { hasReservedPrefix, isValidMetaKey, passthroughMeta } from "../../lib/frontend/meta.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

const VALID = [
  "",
  "traceparent",
  "a",
  "a1",
  "a-b_c.d",
  "vscode.chat/requestId",
  "com.example/x",
  "x/",
  "a.b-c.d/n",
  "A9/z",
];
const INVALID = [
  "-a",
  "a-",
  "_a",
  "a_",
  ".a",
  "1a/x",
  "a./x",
  "a..b/x",
  "-a/x",
  "a-/x",
  "a b",
  "a/b/c",
  "é",
];

for (const key of VALID) {
  Deno.test(`meta key valid: ${JSON.stringify(key)}`, () => strictEqual(isValidMetaKey(key), true));
}
for (const key of INVALID) {
  Deno.test(`meta key not valid: ${JSON.stringify(key)}`, () =>
    strictEqual(isValidMetaKey(key), false));
}

Deno.test("reserved prefixes: the second label is modelcontextprotocol or mcp", () => {
  deepStrictEqual(
    [
      "io.modelcontextprotocol/x",
      "dev.mcp/x",
      "com.mcp.tools/x",
      "com.example.mcp/x",
      "vscode.mcp/x",
      "mcp/x",
      "x",
    ].map(
      hasReservedPrefix,
    ),
    [true, true, true, false, true, false, false],
  );
});

Deno.test("passthrough: profile keys that pass every rule go with their value; the rest is dropped", () => {
  deepStrictEqual(
    passthroughMeta({
      traceparent: "00-1",
      tracestate: { any: ["value"] },
      "vscode.chat/id": 5,
      "vscode.mcp/x": 1,
      "vscode.-bad/x": 1,
      progressToken: 3,
      "io.modelcontextprotocol/logLevel": "x",
      other: 1,
      baggage: "b",
    }, VSCODE_PROFILE.meta_passthrough),
    { traceparent: "00-1", tracestate: { any: ["value"] }, "vscode.chat/id": 5 },
  );
  strictEqual(passthroughMeta({ other: 1 }, VSCODE_PROFILE.meta_passthrough), undefined);
});
