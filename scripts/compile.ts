/**
 * Builds the executable for the five targets of `scripts/release_targets.json`
 * into dist/, and writes dist/SHA256SUMS. First it bundles the program into
 * dist/bundle/ (`scripts/bundle.ts`: the program and its npm packages,
 * minified, a chunk per `import()`, with source maps); then `deno compile`
 * embeds that directory, without a config file, with the flags of the
 * `default` permission set of deno.json (`runtimeFlags`): the binary is the
 * Deno runtime of its target plus the bundle that the process tests run.
 *
 * `deno compile` downloads the Deno runtime (denort) for each target. Where
 * that download is not possible, set DENORT_BIN to a local denort: it builds
 * for this host only. `--target TRIPLE` (repeatable) builds only those.
 *
 * Run: `deno task compile [--target TRIPLE]...`
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { writeChecksums } from "./checksums.ts";
import { buildBundle, BUNDLE_ENTRY } from "./bundle.ts";
import {
  assetName,
  compileArgs,
  hostTarget,
  type ReleaseTarget,
  TARGETS,
} from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const enc = new TextEncoder();
const say = (line: string) => Deno.stderr.writeSync(enc.encode(line + "\n"));

/** The targets of a command line: `--target` names them, DENORT_BIN keeps the host's. */
export function chosenTargets(argv: readonly string[], denort: boolean): ReleaseTarget[] {
  const { values } = parseArgs({
    args: [...argv],
    options: { target: { type: "string", multiple: true } },
  });
  const named = values.target;
  let targets = named ? TARGETS.filter((t) => named.includes(t.target)) : [...TARGETS];
  if (named && targets.length !== named.length) {
    throw new Error(`a --target is not one of ${TARGETS.map((t) => t.target).join(", ")}`);
  }
  if (denort) targets = targets.filter((t) => t === hostTarget());
  return targets;
}

async function main(): Promise<number> {
  const targets = chosenTargets(Deno.args, Deno.env.get("DENORT_BIN") !== undefined);
  let failed = 0;
  const built: string[] = [];
  const bundle = `${root}dist/bundle`;
  buildBundle(bundle);
  say(`bundled the program into ${bundle}`);
  for (const target of targets) {
    const output = `${root}dist/${assetName(target)}`;
    const result = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(target, output, `${bundle}/${BUNDLE_ENTRY}`),
      cwd: root,
      stdout: "inherit",
      stderr: "piped",
    }).output();
    if (result.success) {
      say(`built ${output}`);
      built.push(output);
      continue;
    }
    failed++;
    const lines = new TextDecoder().decode(result.stderr).split("\n");
    const reason = lines.find((line) => /error/i.test(line))?.trim() ?? "no reason given";
    say(`cannot build for ${target.target}: deno compile failed.`);
    say(`  (${reason})`);
    say(
      "  The runtime download needs the internet. Set DENORT_BIN to a local denort to build for this host.",
    );
  }
  if (failed === 0 && built.length > 0) {
    await writeChecksums(`${root}dist`, built);
    say(`wrote ${root}dist/SHA256SUMS`);
  }
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
