/**
 * The demo: a real session through the bridge in front of the bundled demo
 * server of revision 2026-07-28, with the MCP SDK 1.x client that VS Code
 * runs. Prints each message as a readable transcript.
 *
 * Then the embedded bridge: the example server of `scripts/embed_server.ts`
 * with a v1 client (the legacy path) and a v2 client (the modern path).
 *
 * Run: `deno task demo`
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";

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

// The embedded bridge: the example server serves both revisions in one process.
out("\nThe embedded bridge: scripts/embed_server.ts calls serveStdio of the ./embed export.");
out(
  "client (MCP SDK 1.x, revision 2025-11-25) -> example server (legacy path, no second process)\n",
);

/** Runs the example server as a child of `transport` and shows what the v1 client sees. */
async function embeddedLegacy(): Promise<void> {
  const transport = new StdioClientTransport({
    command: deno,
    args: ["run", "-q", "-P", `${root}scripts/embed_server.ts`],
    cwd: root,
    stderr: "inherit",
  });
  const client = new Client({ name: "vscode-like-demo", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  received("initialize result (legacy path)", {
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
  });
  const tools = await client.listTools();
  received("tools/list result: the schema of 'echo' (its array got items)", {
    echo: tools.tools.find((t: { name: string }) => t.name === "echo")?.inputSchema,
  });
  received(
    "tools/call result",
    await client.callTool({ name: "echo", arguments: { text: "Hello from the same process" } }),
  );
  await client.close();
}

/** The same example server for a client of revision 2026-07-28: the SDK's stdio transport. */
async function embeddedModern(): Promise<void> {
  out("client (MCP SDK v2, revision 2026-07-28) -> example server (modern path)\n");
  // A subclass probes server/discover on its own connection (no throw-away second process).
  class InPlace extends ModernStdioTransport {}
  const transport = new InPlace({
    command: deno,
    args: ["run", "-q", "-P", `${root}scripts/embed_server.ts`],
    cwd: root,
    stderr: "inherit",
  });
  const client = new ModernClient({ name: "modern-demo", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(transport);
  received("server/discover (modern path)", { serverInfo: client.getServerVersion() });
  received(
    "tools/call result",
    await client.callTool({ name: "echo", arguments: { text: "Hello, revision 2026-07-28" } }),
  );
  await client.close();
}

await embeddedLegacy();
await embeddedModern();
out(
  "Both clients ran the same server program; the bridge served only the VS Code-like one, inside it.",
);
