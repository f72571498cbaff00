/**
 * The client under test of the conformance package's auth scenarios: the
 * v1 SDK client (as VS Code runs it) in front of the real bridge, which
 * signs in to the scenario's server. The scenario gives the URL as the last
 * argument; `BROWSER` is the test browser, which follows the redirects.
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeBrowserScript } from "../fixtures/auth/browser_script.ts";
import { freePort } from "../free_port.ts";
import { programArgs } from "../process/program.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const url = Deno.args.at(-1)!;
const dir = await Deno.makeTempDir({ prefix: "auth-conformance-" });
const browser = await writeBrowserScript(dir);
const context = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}") as Record<
  string,
  string
>;
/** The client ID metadata document that the scenarios expect a client to be configured with. */
const CIMD = "https://conformance-test.local/client-metadata.json";
const args = [
  url,
  "--token-store",
  `${dir}/store`,
  "--log-level",
  "debug",
  "--sign-in-timeout",
  "20",
  "--client-metadata-url",
  CIMD,
];
// A free redirect port, not the one derived from the URL: the scenarios run side by side with
// other tests, and two derived ports (20000-31999) can meet.
args.push("--redirect-port", String(freePort()));
const env: Record<string, string> = { ...Deno.env.toObject(), BROWSER: browser };
if (context.client_id) {
  args.push("--client-id", context.client_id);
  args.push("--client-issuer", context.issuer ?? context.authorization_server ?? "");
  if (context.client_secret) {
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    args.push("--client-secret-env", "CONFORMANCE_CLIENT_SECRET");
  }
}
const transport = new StdioClientTransport({
  command: Deno.execPath(),
  args: programArgs(args),
  cwd: ROOT,
  env,
  stderr: "inherit",
});
const client = new Client({ name: "conformance-v1", version: "1.0.0" }, { capabilities: {} });
let code = 0;
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  for (const tool of tools) {
    await client.callTool({ name: tool.name, arguments: {} }).catch((error: unknown) => {
      Deno.stderr.writeSync(new TextEncoder().encode(`tool ${tool.name}: ${error}\n`));
    });
  }
} catch (error) {
  Deno.stderr.writeSync(new TextEncoder().encode(`client failed: ${error}\n`));
  code = 1;
} finally {
  await client.close().catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
Deno.exit(code);
