/**
 * Builds the executable for the five targets into dist/, with the `default`
 * permission set of deno.json (`-P`), as `deno task start` runs it.
 *
 * `deno compile` downloads the Deno runtime (denort) for each target. Where
 * that download is not possible, set DENORT_BIN to a local denort: it builds
 * for this host only.
 *
 * Run: `deno task compile`
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const enc = new TextEncoder();
const say = (line: string) => Deno.stderr.writeSync(enc.encode(line + "\n"));

export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

const HOST = `${Deno.build.arch}-${Deno.build.vendor}-${
  Deno.build.os === "linux" ? "linux-gnu" : Deno.build.os
}`;
const targets = Deno.env.get("DENORT_BIN") ? TARGETS.filter((t) => t === HOST) : TARGETS;

let failed = 0;
for (const target of targets) {
  const suffix = target.includes("windows") ? ".exe" : "";
  const output = `${root}dist/mcp-bridge-vscode-${target}${suffix}`;
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["compile", "-P", "--target", target, "--output", output, `${root}main.ts`],
    cwd: root,
    stdout: "inherit",
    stderr: "piped",
  }).output();
  if (result.success) {
    say(`built ${output}`);
    continue;
  }
  failed++;
  const lines = new TextDecoder().decode(result.stderr).split("\n");
  const reason = lines.find((line) => /error/i.test(line))?.trim() ?? "no reason given";
  say(`cannot build for ${target}: deno compile could not get the Deno runtime for this target.`);
  say(`  (${reason})`);
  say(
    "  The runtime download needs the internet. Set DENORT_BIN to a local denort to build for this host.",
  );
}
Deno.exit(failed === 0 ? 0 : 1);
