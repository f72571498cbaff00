/**
 * An example server of revision 2026-07-28 that serves VS Code with no second
 * process: it calls `serveStdio` of the `./embed` export of this package in
 * place of the SDK's own. A client of revision 2025-11-25 (VS Code) gets the
 * legacy path through the bridge in the same process; a client of revision
 * 2026-07-28 gets the SDK's stdio transport.
 *
 * Tools: echo, slow (waits `ms`, or until it is canceled), add_tool (the
 * tool list changes), confirm (asks the user, an input round), log (a log
 * message), touch (an update of the resource `uri`), plus a prompt, a
 * resource with an icon, and a template with completion.
 *
 * Run: `deno run scripts/embed_server.ts [--refuse-discover] [--shutdown-grace-ms MS]`
 * (`--sdk`: the SDK's own serveStdio instead, for the benchmark)
 *
 * @module
 */

import {
  acceptedContent,
  fromJsonSchema,
  inputRequired,
  McpServer,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { serveStdio as sdkServeStdio } from "@modelcontextprotocol/server/stdio";
import { serveStdio, type StdioOptions } from "@mcp-bridge/vscode/embed";

type Args = Record<string, unknown>;
const anyArgs = () => fromJsonSchema<Args>({ type: "object" });
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** The icon of the readme: the memory link is not remote, so it reaches VS Code. */
export const README_ICON = { src: "https://example.com/readme.png", mimeType: "image/png" };

/** A fresh server for one connection (the factory of `serveStdio`). */
export function buildServer(): McpServer {
  const server = new McpServer(
    { name: "embedded-example", version: "1.0.0", title: "Embedded example" },
    {
      capabilities: { logging: {}, resources: { subscribe: true } },
      instructions: "An example of the embedded bridge.",
    },
  );
  server.registerTool("echo", {
    description: "Returns its text.",
    inputSchema: fromJsonSchema<Args>({
      type: "object",
      properties: { text: { type: "string" }, tags: { type: "array" } },
    }),
  }, (args: Args) => text(String(args.text)));
  server.registerTool("slow", { inputSchema: anyArgs() }, async (args: Args, ctx) => {
    const signal = ctx.mcpReq.signal;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Number(args.ms ?? 1000));
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    return text(signal.aborted ? "slow canceled" : "slow done");
  });
  let added = 0;
  server.registerTool("add_tool", { inputSchema: anyArgs() }, (args: Args) => {
    const name = String(args.name ?? `added_${++added}`);
    // The tool list changes on this task: the event goes out before the result.
    server.registerTool(name, { inputSchema: anyArgs() }, () => text(name));
    return text(`added ${name}`);
  });
  server.registerTool("confirm", { inputSchema: anyArgs() }, (_args: Args, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: "Go on?",
            requestedSchema: {
              type: "object",
              properties: { ok: { type: "boolean" } },
              required: ["ok"],
            },
          }),
        },
      });
    }
    return text(answer.ok === true ? "confirmed" : "not confirmed");
  });
  server.registerTool("log", { inputSchema: anyArgs() }, async (args: Args, ctx) => {
    await ctx.mcpReq.log("info", { note: args.note ?? "hello" }, "example");
    return text("logged");
  });
  server.registerTool("touch", { inputSchema: anyArgs() }, async (args: Args) => {
    await server.server.sendResourceUpdated({ uri: String(args.uri) });
    return text("touched");
  });
  server.registerPrompt("greet", { description: "A greeting." }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "Hello." } }],
  }));
  server.registerResource(
    "readme",
    "example://readme",
    { mimeType: "text/plain", icons: [README_ICON] },
    (uri: URL) => ({ contents: [{ uri: uri.href, text: "readme text" }] }),
  );
  server.registerResource(
    "note",
    new ResourceTemplate("example://notes/{id}", {
      list: undefined,
      complete: { id: () => ["10", "11"] },
    }),
    { mimeType: "text/plain" },
    (uri: URL, vars: Record<string, string | string[]>) => ({
      contents: [{ uri: uri.href, text: `note ${vars.id}` }],
    }),
  );
  return server;
}

/**
 * The options of `serveStdio` for the arguments of this program
 * (`--refuse-discover`, `--shutdown-grace-ms MS`): the tests run the same
 * setup in their own process.
 */
export function exampleOptions(args: readonly string[]): StdioOptions {
  const discover = args.includes("--refuse-discover") ? "refuse" : "answer";
  // Tests make the wait at the end of the input short.
  const grace = args.indexOf("--shutdown-grace-ms");
  const limits = grace === -1 ? {} : { shutdown_grace_ms: Number(args[grace + 1]) };
  return { discover, limits };
}

if (import.meta.main) {
  if (Deno.args.includes("--sdk")) {
    // For the benchmark: the same server with the SDK's own serveStdio (its legacy shim).
    sdkServeStdio(buildServer);
  } else {
    await serveStdio(buildServer, exampleOptions(Deno.args));
  }
}
