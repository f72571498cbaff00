/**
 * The demo: a real session through the bridge in front of the bundled demo
 * server of revision 2026-07-28, with the MCP SDK 1.x client that VS Code
 * runs. Prints each message as a readable transcript.
 *
 * Run: `deno task demo`
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const deno = Deno.execPath();
const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
const show = (value: unknown) =>
  JSON.stringify(value, null, 2).split("\n").map((l) => "    " + l).join("\n");

out("mcp-bridge-vscode demo");
out(
  "client (MCP SDK 1.x, revision 2025-11-25) -> bridge -> demo server (revision 2026-07-28 only)\n",
);

const transport = new StdioClientTransport({
  command: deno,
  args: ["run", "-q", "-P", `${root}main.ts`, "--", deno, "run", `${root}scripts/demo_server.ts`],
  cwd: root,
  stderr: "inherit",
});
const send = transport.send.bind(transport);
transport.send = async (
  message: Parameters<typeof send>[0],
  options?: Parameters<typeof send>[1],
) => {
  const m = message as { method?: string; params?: unknown; id?: unknown };
  if (m.method) {
    out(`--> ${m.method}${m.id === undefined ? " (notification)" : ""}\n${show(m.params ?? {})}`);
  }
  await send(message, options);
};
const client = new Client({ name: "vscode-like-demo", version: "1.0.0" }, { capabilities: {} });
const received = (label: string, value: unknown) => out(`<-- ${label}\n${show(value)}\n`);

await client.connect(transport);
received("initialize result", {
  serverInfo: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  instructions: client.getInstructions(),
});
received("tools/list result", await client.listTools());
received(
  "tools/call result",
  await client.callTool({ name: "echo", arguments: { text: "Hello through the bridge" } }),
);
received(
  "tools/call result",
  await client.callTool({ name: "sum", arguments: { numbers: [1, 2, 3] } }),
);
await client.close();
out("The session ended. The bridge gave the array schema of 'sum' an items schema, mirrored its");
out("structuredContent as text, and removed the members of revision 2026-07-28.");
