/**
 * The bundled demo server: an MCP server of revision 2026-07-28 only (it
 * refuses initialize), built with the SDK v2 `McpServer`. It has one tool of
 * each kind that the bridge repairs, a prompt, resources and completion.
 *
 * @module
 */

import { fromJsonSchema, McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

// stdout is the protocol channel: send every console method to stderr.
for (const method of ["log", "debug", "info", "warn"] as const) {
  // deno-lint-ignore no-console
  console[method] = (...args: unknown[]) => console.error(...args);
}

function demoServer(): McpServer {
  const server = new McpServer(
    { name: "demo-2026", title: "Demo server (2026-07-28)", version: "1.0.0" },
    { capabilities: { logging: {} }, instructions: "A demo server for mcp-bridge-vscode." },
  );
  server.registerTool("echo", {
    description: "Returns its text.",
    inputSchema: fromJsonSchema<Record<string, unknown>>({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    }),
  }, (args: Record<string, unknown>) => ({ content: [{ type: "text", text: String(args.text) }] }));
  server.registerTool("sum", {
    description: "Adds numbers. Its array schema has no items: the bridge adds them.",
    inputSchema: fromJsonSchema<Record<string, unknown>>({
      type: "object",
      properties: { numbers: { type: "array" } },
    }),
  }, (args: Record<string, unknown>) => {
    const numbers = Array.isArray(args.numbers) ? args.numbers.map(Number) : [];
    const total = numbers.reduce((a, b) => a + b, 0);
    return { content: [], structuredContent: { total } };
  });
  server.registerPrompt(
    "greet",
    {
      description: "A greeting.",
    },
    () => ({
      messages: [{ role: "user", content: { type: "text", text: "Hello from the demo server." } }],
    }),
  );
  server.registerResource("readme", "demo://readme", { mimeType: "text/plain" }, (uri: URL) => ({
    contents: [{ uri: uri.href, text: "This is the demo server." }],
  }));
  server.registerResource(
    "note",
    new ResourceTemplate("demo://notes/{id}", {
      list: undefined,
      complete: { id: () => ["1", "2", "3"] },
    }),
    { mimeType: "text/plain" },
    (uri: URL, vars: Record<string, string | string[]>) => ({
      contents: [{ uri: uri.href, text: `Note ${vars.id}` }],
    }),
  );
  return server;
}

if (import.meta.main) serveStdio(demoServer, { legacy: "reject" });
