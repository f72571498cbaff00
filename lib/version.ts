/**
 * The version of mcp-bridge-vscode; deno.json has the same value.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * if (!/^\d+\.\d+\.\d+/.test(VERSION)) throw new Error("a semantic version");
 * ```
 */
export const VERSION = "0.1.0";
