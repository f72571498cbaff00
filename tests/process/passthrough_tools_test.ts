/**
 * `--tool` and `--ignore-tool` with `--protocol auto` in front of
 * `@modelcontextprotocol/server-everything` (revision 2025-11-25 only), over
 * stdio and over its Streamable HTTP mode: the v1 SDK client (as VS Code
 * runs it) lists what the server lists, less the hidden tools, and the call
 * of a hidden tool is the bridge's error, not the server's.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { bridged, direct, everythingHttp, nodeServer } from "./passthrough_helpers.ts";
import { runBridge } from "./helpers.ts";

/** The names of every page of tools/list. */
async function toolNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    names.push(...page.tools.map((t: { name: string }) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

const FLAGS = ["--tool", "get-*", "--tool", "echo", "--ignore-tool", "get-tiny-*"];
const shown = (name: string) =>
  (name.startsWith("get-") || name === "echo") && !name.startsWith("get-tiny-");

for (const transport of ["stdio", "http"] as const) {
  Deno.test(`pass-through over ${transport}: tools/list without the hidden tools; a hidden tool's call is refused by the bridge`, async () => {
    await using http = transport === "http" ? await everythingHttp() : undefined;
    const upstream = http ? [http.url] : ["--", ...nodeServer("everything")];
    const plain = await direct(nodeServer("everything"));
    const all = await toolNames(plain.client);
    await plain.client.close();
    const { client, stderr } = await bridged([...FLAGS, ...upstream]);
    try {
      const listed = await toolNames(client);
      // The server's own order, less the hidden tools.
      deepStrictEqual(listed, all.filter(shown));
      ok(listed.includes("echo") && listed.includes("get-sum"), listed.join());
      ok(!listed.includes("get-tiny-image") && !listed.includes("trigger-sampling-request"));
      for (const hidden of ["get-tiny-image", "trigger-sampling-request"]) {
        let error: unknown;
        try {
          await client.callTool({ name: hidden, arguments: {} });
        } catch (e) {
          error = e;
        }
        ok(error instanceof McpError, String(error));
        const { code, data } = error as { code: number; data: unknown };
        deepStrictEqual([code, data], [-32602, { cause: "tool_not_allowed" }]);
      }
      const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
      ok(JSON.stringify(sum.content).includes("42"), JSON.stringify(sum));
      ok(stderr().includes('refused a tools/call: The tool "get-tiny-image"'), stderr());
    } finally {
      await client.close();
    }
  });
}

Deno.test("doctor, pass-through over HTTP: the tools that --tool and --ignore-tool hide, on the session of revision 2025-11-25", async () => {
  await using http = await everythingHttp();
  const out = await runBridge(["doctor", "--protocol", "auto", ...FLAGS, http.url]);
  ok(out.code === 0, out.stdout + out.stderr);
  ok(out.stdout.includes("--tool and --ignore-tool hide "), out.stdout);
  ok(out.stdout.includes('"get-tiny-image"') && out.stdout.includes('"trigger-sampling-request"'));
  ok(!out.stdout.includes('"get-sum"'), out.stdout);
});
