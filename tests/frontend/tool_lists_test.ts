/**
 * `--tool` and `--ignore-tool` through the front end, with the v1 SDK client
 * as VS Code runs it: an SDK v2 server that counts the calls of each tool
 * (a hidden tool is never called upstream), and a raw server at a URL whose
 * tools/list has pages (an empty page keeps its nextCursor; the refused
 * call never reaches the server).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { inProcessTransport } from "./v1_client.ts";
import { InProcessBridge } from "./in_process.ts";
import { result, serveMcp } from "../fixtures/http_raw.ts";

type Args = Record<string, unknown>;

/** An SDK v2 server factory whose tools count their calls. */
function countingServer(names: readonly string[]): {
  factory: () => McpServer;
  calls: Map<string, number>;
} {
  const calls = new Map<string, number>();
  const factory = () => {
    const server = new McpServer({ name: "counting", version: "1.0.0" });
    for (const name of names) {
      server.registerTool(name, { inputSchema: fromJsonSchema<Args>({ type: "object" }) }, () => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        return { content: [{ type: "text", text: `ran ${name}` }] };
      });
    }
    return server;
  };
  return { factory, calls };
}

/** The error of a call that the v1 client rejects. */
async function callError(client: Client, name: string): Promise<McpError> {
  try {
    await client.callTool({ name, arguments: {} });
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error(`the call of ${name} did not fail`);
}

Deno.test("tool lists: VS Code sees only the shown tools; a hidden tool's call is refused by the bridge and never runs", async () => {
  const { factory, calls } = countingServer([
    "echo",
    "secret_read",
    "secret_write",
    "dangerous_delete",
  ]);
  const transport = inProcessTransport(factory, [
    "--tool",
    "secret_*",
    "--tool",
    "echo",
    "--ignore-tool",
    "*_write",
  ]);
  const client = new Client({ name: "vscode-like", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  try {
    const listed = await client.listTools();
    deepStrictEqual(listed.tools.map((t: { name: string }) => t.name).sort(), [
      "echo",
      "secret_read",
    ]);
    for (const hidden of ["secret_write", "dangerous_delete", "ECHO", "echo2"]) {
      const error = await callError(client, hidden);
      strictEqual(error.code, -32602);
      deepStrictEqual(error.data, { cause: "tool_not_allowed" });
      ok(error.message.includes(`The tool "${hidden}" is not available`), error.message);
    }
    const shown = await client.callTool({ name: "secret_read", arguments: {} });
    deepStrictEqual(shown.content, [{ type: "text", text: "ran secret_read" }]);
    // The server ran the shown tool once and no hidden one.
    deepStrictEqual(Object.fromEntries(calls), { secret_read: 1 });
  } finally {
    await client.close();
  }
});

Deno.test("tool lists: a URL upstream's pages lose the hidden tools, an emptied page keeps its nextCursor, and the refusal never reaches the server", async () => {
  const seen: string[] = [];
  const PAGES: Record<string, { names: string[]; next?: string }> = {
    "": { names: ["a_keep", "b_drop"], next: "p2" },
    "p2": { names: ["c_drop"], next: "p3" },
    "p3": { names: ["d_keep"] },
  };
  await using upstream = serveMcp((m) => {
    seen.push(`${m.method} ${(m.params?.name as string | undefined) ?? ""}`.trim());
    if (m.method === "tools/list") {
      const page = PAGES[(m.params?.cursor as string | undefined) ?? ""]!;
      return result(m, {
        resultType: "complete",
        tools: page.names.map((name) => ({ name, inputSchema: { type: "object" } })),
        ...(page.next && { nextCursor: page.next }),
      });
    }
    if (m.method === "tools/call") {
      return result(m, { resultType: "complete", content: [{ type: "text", text: "ran" }] });
    }
    return undefined;
  }, { tools: {} });
  await using bridge = new InProcessBridge(["--ignore-tool", "*_drop"], upstream.url);
  await bridge.initialize();
  let id = 10;
  const ask = async (method: string, params: unknown): Promise<Record<string, unknown>> => {
    await bridge.request(++id, method, params);
    return await bridge.response(id);
  };
  const pages: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await ask("tools/list", cursor ? { cursor } : {}) as {
      result: { tools: { name: string }[]; nextCursor?: string };
    };
    pages.push({ names: page.result.tools.map((t) => t.name), next: page.result.nextCursor });
    cursor = page.result.nextCursor;
  } while (cursor);
  deepStrictEqual(pages, [
    { names: ["a_keep"], next: "p2" },
    { names: [], next: "p3" },
    { names: ["d_keep"], next: undefined },
  ]);
  const refused = await ask("tools/call", { name: "c_drop", arguments: {} }) as {
    error: { code: number; data: unknown };
  };
  deepStrictEqual([refused.error.code, refused.error.data], [-32602, {
    cause: "tool_not_allowed",
  }]);
  ok(bridge.stderr.includes('refused a tools/call: The tool "c_drop" is not available'));
  const called = await ask("tools/call", { name: "d_keep", arguments: {} }) as {
    result: unknown;
  };
  ok(called.result);
  deepStrictEqual(seen.filter((line) => line.startsWith("tools/call")), ["tools/call d_keep"]);
});
