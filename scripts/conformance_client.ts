/**
 * The client under test of the conformance package's client scenarios: a
 * client of revision 2025-11-25 (the v1 SDK client, as VS Code runs it)
 * through the real bridge, whose upstream is the scenario's server at the
 * URL that the package appends to the command line. The arguments before
 * the URL, when there are any, are those of `deno` that run the bridge (the
 * tests give the bundle's); without them it runs `main.ts` as
 * `deno task start` does.
 *
 * Run by `scripts/conformance.ts` and the tests; not a product path.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const url = Deno.args.at(-1)!;
const given = Deno.args.slice(0, -1);
const bridge = given.length > 0 ? given : ["run", "-q", "-P", `${root}main.ts`];
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
const say = (line: string) => Deno.stderr.writeSync(new TextEncoder().encode(`client: ${line}\n`));

async function connect(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...bridge, "--log-level", "debug", url],
    cwd: root,
    stderr: "inherit",
  });
  const client = new Client({ name: "conformance-v1", version: "1.0.0" }, {
    capabilities: { roots: {}, elicitation: { form: {} }, sampling: {} },
  });
  await client.connect(transport);
  return client;
}

/** A client of VS Code sends initialize once; `retry` tries one more connection after a failure. */
async function session(retry: boolean): Promise<Client | undefined> {
  try {
    return await connect();
  } catch (error) {
    say(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
    if (!retry) return undefined;
    return await session(false);
  }
}

const retry = Deno.env.get("CONFORMANCE_RETRY_INITIALIZE") === "1";
const client = await session(retry);
if (client) {
  try {
    const tools = await client.listTools();
    say(`tools: ${tools.tools.map((t: { name: string }) => t.name).join(", ")}`);
    if (
      scenario === "tools_call" ||
      tools.tools.some((t: { name: string }) => t.name === "add_numbers")
    ) {
      const result = await client.callTool({ name: "add_numbers", arguments: { a: 2, b: 3 } });
      say(`add_numbers: ${JSON.stringify(result)}`);
    } else {
      await client.callTool({ name: tools.tools[0]?.name ?? "x", arguments: {} }).catch(() => {});
    }
  } finally {
    await client.close();
  }
}
