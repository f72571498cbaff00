/**
 * mcp-bridge-vscode: a stdio MCP server of revision 2025-11-25 for VS Code in
 * front of an MCP server of revision 2026-07-28 (or, with `--protocol auto`,
 * of revision 2025-11-25).
 *
 * This file only starts the command line (`lib/cli/`).
 *
 * @module
 */

import { runCli } from "./lib/cli/run.ts";

if (import.meta.main) Deno.exit(await runCli(Deno.args));
