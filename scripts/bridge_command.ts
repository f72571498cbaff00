/**
 * The command line of the bridge in the benchmarks: `deno run -q -P main.ts`
 * (the `default` permission set, as `deno task start` runs it), with only
 * its errors logged, so that stderr costs nothing in the figures.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("../main.ts", import.meta.url));

/** The arguments of `deno` that run the bridge with the command line `argv`. */
export function bridgeArgs(...argv: string[]): string[] {
  return ["run", "-q", "-P", main, "--log-level", "error", ...argv];
}

/** The whole command (this Deno first) that runs the bridge with the command line `argv`. */
export function bridgeCommand(...argv: string[]): string[] {
  return [Deno.execPath(), ...bridgeArgs(...argv)];
}

/**
 * The arguments of `deno` that run `serve` with `argv` (after the word),
 * with only its errors logged (a later `--log-level` wins).
 */
export function serveArgs(...argv: string[]): string[] {
  return ["run", "-q", "-P", main, "serve", "--log-level", "error", ...argv];
}
