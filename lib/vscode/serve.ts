/**
 * The embedded bridge for VS Code: `serveStdio` in place of the SDK's own.
 * A server of revision 2026-07-28 built with the MCP TypeScript SDK v2 then
 * serves VS Code (revision 2025-11-25) with every rule of the bridge, in its
 * own process, and serves clients of revision 2026-07-28 as the SDK does.
 *
 * ```ts ignore
 * import { serveStdio } from "@mcp-bridge/vscode/embed";
 *
 * await serveStdio(() => buildServer(), { discover: "answer" });
 * ```
 *
 * @module
 */

import { type Discover, serveStdioAuto } from "../embed/embed.ts";
import { DEFAULT_LIMITS, type Limits } from "../settings/limits.ts";
import { createLogger, type LogLevel, redirectConsoleToStderr } from "../log.ts";
import { LOG_FLUSH_MS, stderrSink } from "../log_sink.ts";
import type { ServerFactory, ServerProduct } from "../upstream/memory.ts";
import { VSCODE_PROFILE } from "./profile.ts";
import { ToolFilter } from "../translate/tool_filter.ts";

export type { Discover, ServerFactory, ServerProduct };

/** Options of {@linkcode serveStdio}. */
export interface StdioOptions {
  /**
   * A server/discover before the first other request: `"answer"` (the
   * default) lets the server answer it, and a client of revision 2026-07-28
   * goes on with the modern path; `"refuse"` answers -32601, and a client of
   * both revisions (the Copilot harness) then sends initialize and takes the
   * legacy path.
   */
  readonly discover?: Discover;
  /** The fallback server name (legacy path); default: the name of the server. */
  readonly name?: string;
  /**
   * The limits of the connection: `max_line_bytes`, `max_depth`,
   * `max_in_flight_requests`, `shutdown_grace_ms` and the rest of the stdio
   * bridge's limits; each one left out has the default of the stdio bridge.
   */
  readonly limits?: Partial<Limits>;
  /** The level of the bridge's log lines on stderr (default `info`, as the stdio bridge). */
  readonly logLevel?: LogLevel;
  /** The input of the client; default stdin. */
  readonly input?: ReadableStream<Uint8Array>;
  /** The output for the client; default stdout. A stream given here is closed at the end. */
  readonly output?: WritableStream<Uint8Array>;
  /**
   * Only the tools whose name matches one of these globs (`*` matches any
   * run of characters; case-sensitive), as `--tool` of the stdio bridge.
   * On both paths, tools/list leaves out the others, and a tools/call of one
   * gets -32602 (`tool_not_allowed`) without reaching the server.
   */
  readonly tools?: readonly string[];
  /** Never the tools whose name matches one of these globs, as `--ignore-tool`. */
  readonly ignoreTools?: readonly string[];
}

/**
 * Serves one stdio connection with a fresh server of `factory` and resolves
 * after the end of the input, when the path has stopped: no listen stream
 * and no timer are left.
 *
 * The first request selects the path: `initialize` takes the legacy path
 * (the bridge with the vscode profile, over a memory link to the server);
 * any other message takes the modern path (the SDK v2 stdio transport).
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { serveStdio } from "./serve.ts";
 *
 * const build = () => new McpServer({ name: "doc-example", version: "1.0.0" });
 * // server/discover first: with the default discover "answer", the server answers it.
 * const meta = {
 *   "io.modelcontextprotocol/protocolVersion": "2026-07-28",
 *   "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
 *   "io.modelcontextprotocol/clientCapabilities": {},
 * };
 * const line = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } });
 * const input = ReadableStream.from([new TextEncoder().encode(line + "\n")]);
 * let text = "";
 * const output = new WritableStream<Uint8Array>({
 *   write: (chunk) => void (text += new TextDecoder().decode(chunk)),
 * });
 * await serveStdio(build, { input, output, logLevel: "error" });
 * // The end of the input waited for the request in flight: it got its result.
 * const answer = JSON.parse(text);
 * if (answer.id !== 1 || answer.result.supportedVersions[0] !== "2026-07-28") throw new Error(text);
 * ```
 */
export async function serveStdio(
  factory: ServerFactory,
  options: StdioOptions = {},
): Promise<void> {
  const profile = VSCODE_PROFILE;
  // An empty glob throws a TypeError here, before a byte is read.
  const tools = ToolFilter.of({ tools: options.tools, ignoreTools: options.ignoreTools });
  // stdout is the protocol channel: the SDK calls console.debug in places.
  if (options.output === undefined) redirectConsoleToStderr();
  await serveStdioAuto(factory, {
    profile,
    discover: options.discover ?? "answer",
    name: options.name,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    log: createLogger(profile.name, options.logLevel ?? "info"),
    // Plain reads of stdin: no web stream stage per chunk (lib/jsonrpc/byte_io.ts).
    input: options.input ?? Deno.stdin,
    output: options.output ?? Deno.stdout.writable,
    closeOutput: options.output !== undefined,
    tools,
  });
  // The last log lines reach a stderr that is read before the server goes on (or exits).
  await stderrSink().flush(LOG_FLUSH_MS);
}
