import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  forwardParams,
  hasModernMeta,
  initializeResult,
  isInitializeParams,
  progressToken,
  serverInfo,
  upstreamCapabilities,
  upstreamClientInfo,
} from "../../lib/translate/translate.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

const FALLBACK = { name: "my-server", version: "0.1.0" };

Deno.test("capabilities for the upstream: each rule of the table", () => {
  deepStrictEqual(
    upstreamCapabilities({
      sampling: { tools: {}, context: {} },
      elicitation: { form: {}, url: {}, other: 1 },
      roots: { listChanged: true },
      experimental: { a: {}, b: 1, c: [] },
      extensions: { "io.modelcontextprotocol/tasks": {}, "com.example/x": { v: 1 }, bad: "s" },
      tasks: { list: {} },
      other: {},
    }),
    {
      sampling: { tools: {}, context: {} },
      elicitation: { form: {}, url: {} },
      roots: {},
      experimental: { a: {} },
      extensions: { "com.example/x": { v: 1 } },
    },
  );
});

Deno.test("capabilities for the upstream: no sampling.tools is added, bad shapes are dropped", () => {
  deepStrictEqual(upstreamCapabilities({ sampling: {}, elicitation: {} }), {
    sampling: {},
    elicitation: {},
  });
  deepStrictEqual(
    upstreamCapabilities({ sampling: true, elicitation: [], roots: "x", experimental: 1 }),
    {},
  );
  deepStrictEqual(upstreamCapabilities({ elicitation: { form: true, url: {} } }), {
    elicitation: { url: {} },
  });
  deepStrictEqual(upstreamCapabilities(null), {});
});

const DISCOVER = {
  resultType: "complete",
  supportedVersions: ["2026-07-28"],
  capabilities: {
    tools: { listChanged: true },
    prompts: {},
    resources: { subscribe: true, listChanged: false },
    completions: {},
    logging: {},
    experimental: { x: {} },
    extensions: { "io.modelcontextprotocol/tasks": {}, "com.example/e": {} },
    tasks: { requests: {} },
    bogus: {},
  },
  instructions: "Use the tools.",
  _meta: {
    "io.modelcontextprotocol/serverInfo": {
      name: "up",
      title: "Up",
      version: "2.0",
      description: "d",
      websiteUrl: "https://example.com",
      icons: [{ src: "data:image/png;base64,AA" }, { src: "https://example.com/i.png" }, {
        nope: 1,
      }],
      extra: "dropped",
    },
  },
};

Deno.test("initialize result from the discover result", () => {
  deepStrictEqual(initializeResult(VSCODE_PROFILE, DISCOVER, FALLBACK, "all"), {
    protocolVersion: "2025-11-25",
    capabilities: {
      tools: { listChanged: true },
      prompts: {},
      resources: { subscribe: true, listChanged: false },
      completions: {},
      logging: {},
      experimental: { x: {} },
      extensions: { "com.example/e": {} },
    },
    serverInfo: {
      name: "up",
      version: "2.0",
      title: "Up",
      description: "d",
      websiteUrl: "https://example.com",
      icons: [{ src: "data:image/png;base64,AA" }, { src: "https://example.com/i.png" }],
    },
    instructions: "Use the tools.",
  });
});

Deno.test("initialize result: a remote upstream keeps only data: icons (any case)", () => {
  const info = serverInfo(
    {
      _meta: {
        "io.modelcontextprotocol/serverInfo": {
          name: "up",
          version: "1",
          icons: [{ src: "DATA:image/png;base64,AA" }, { src: "file:///x.png" }],
        },
      },
    },
    FALLBACK,
    "data_only",
  );
  deepStrictEqual(info.icons, [{ src: "DATA:image/png;base64,AA" }]);
});

Deno.test("serverInfo falls back to the name and version of the bridge", () => {
  for (
    const meta of [
      undefined,
      {},
      { "io.modelcontextprotocol/serverInfo": { name: "", version: "1" } },
      { "io.modelcontextprotocol/serverInfo": { name: "x" } },
      { "io.modelcontextprotocol/serverInfo": "x" },
    ]
  ) {
    deepStrictEqual(
      serverInfo(meta === undefined ? {} : { _meta: meta }, FALLBACK, "all"),
      FALLBACK,
    );
  }
  const result = initializeResult(
    VSCODE_PROFILE,
    { capabilities: "x", instructions: 5 },
    FALLBACK,
    "all",
  );
  deepStrictEqual(result, {
    protocolVersion: "2025-11-25",
    capabilities: {},
    serverInfo: FALLBACK,
  });
});

Deno.test("params of a forwarded request", () => {
  deepStrictEqual(forwardParams(undefined), { params: {}, meta: undefined });
  deepStrictEqual(forwardParams([1, 2]), { params: {}, meta: undefined });
  deepStrictEqual(forwardParams("x"), { params: {}, meta: undefined });
  deepStrictEqual(
    forwardParams({
      name: "t",
      arguments: { a: 1 },
      task: { ttl: 1 },
      _meta: { progressToken: 0 },
    }),
    { params: { name: "t", arguments: { a: 1 } }, meta: { progressToken: 0 } },
  );
});

Deno.test("progress tokens: every JSON value but null, arrays and objects", () => {
  deepStrictEqual(
    [0, "", "t", 1.5, true, null, [], {}, undefined].map((progress) =>
      progressToken(progress === undefined ? {} : { progressToken: progress })
    ),
    [0, "", "t", 1.5, true, undefined, undefined, undefined, undefined],
  );
});

Deno.test("modern _meta and initialize params", () => {
  strictEqual(
    hasModernMeta({ _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }),
    true,
  );
  strictEqual(hasModernMeta({ _meta: {} }), false);
  strictEqual(
    isInitializeParams({
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    }),
    true,
  );
  strictEqual(
    isInitializeParams({
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c" },
    }),
    false,
  );
  strictEqual(
    isInitializeParams({ capabilities: {}, clientInfo: { name: "c", version: "1" } }),
    false,
  );
});

Deno.test("clientInfo for the upstream keeps the members that have the shape of an Implementation", () => {
  deepStrictEqual(
    upstreamClientInfo({
      name: "Visual Studio Code",
      version: "1.99.0",
      title: "VS Code",
      websiteUrl: 5,
      icons: [{ src: "data:x" }, { nope: true }],
      extra: { a: 1 },
    }),
    { name: "Visual Studio Code", version: "1.99.0", title: "VS Code", icons: [{ src: "data:x" }] },
  );
});
