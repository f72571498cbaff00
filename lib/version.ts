/**
 * The version of mcp-bridge-vscode; deno.json has the same value.
 */
export const VERSION = "0.1.0";
