/**
 * The icon rule data_only of a remote upstream, over HTTP: serverInfo, the
 * four lists, resource links of tools/call and prompts/get results. And
 * the time limit of a forwarded request over HTTP (its POST is aborted).
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { UrlBridge } from "../fixtures/http_bridge.ts";
import { result, serveMcp, serveSilent } from "../fixtures/http_raw.ts";

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
  await using bridge = new UrlBridge([upstream.url]);
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

Deno.test("http: a tools/list without an answer in --request-timeout gets timeout; its POST is aborted", async () => {
  await using upstream = serveSilent(undefined, true);
  await using bridge = new UrlBridge(["--request-timeout", "0.3", upstream.url]);
  await bridge.initialize();
  await bridge.request(1, "tools/list");
  const response = await bridge.response(1);
  deepStrictEqual((response.error as { data: unknown }).data, {
    cause: "timeout",
    detail: "method: tools/list, limit: 300 ms",
  });
  const deadline = Date.now() + 5000;
  while (upstream.closedUnanswered === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  strictEqual(upstream.closedUnanswered, 1);
  strictEqual(await bridge.exit(), 0);
});
