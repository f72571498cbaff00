/**
 * The program as the release binary carries it: one bundle of `main.ts`
 * (`deno bundle`, esbuild: the program and its npm packages, minified,
 * split at each `import()` so that each mode loads only its own chunks),
 * with a linked source map per chunk. `scripts/compile.ts` compiles this
 * directory; the process tests (`tests/process/program.ts`) and
 * `deno task bench:start` run it the way the binary runs it: without a
 * config file, with the flags that `deno compile` bakes in
 * ({@linkcode bundleRunArgs}).
 *
 * The source maps: Deno maps a stack trace through a chunk's linked map
 * (`//# sourceMappingURL=`) only when a stack is formatted, and reads the
 * map then (from the binary's embedded files in a compiled program), so a
 * map costs no start time and no memory. They keep the positions, not the
 * text: `sourcesContent` is dropped (the sources are those of the release's
 * tag). Each source is named by its path in the repository (`lib/cli/run.ts`,
 * which Deno shows next to the bundle) or, for an npm package, as
 * `npm:NAME@VERSION/PATH`: a URL, which Deno shows as it is.
 *
 * Run: `deno run -P=test scripts/bundle.ts OUTDIR` (builds the bundle into
 * OUTDIR, which it empties first).
 *
 * @module
 */

import { relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { runtimeFlags } from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const dec = new TextDecoder();

/** The file of the bundle that the program starts with. */
export const BUNDLE_ENTRY = "main.js";

/** The arguments of `deno` that bundle the program into `outdir`. */
export function bundleArgs(outdir: string): string[] {
  return [
    "bundle",
    "--quiet",
    "--minify",
    "--code-splitting",
    "--platform",
    "deno",
    "--sourcemap",
    "linked",
    "--outdir",
    outdir,
    `${root}main.ts`,
  ];
}

/**
 * The arguments of `deno` that run the bundle in `dir` with the command line
 * `argv` as the release binary runs it: no config file (so no import map,
 * no lockfile, no node_modules), the flags of the compile.
 */
export function bundleRunArgs(dir: string, ...argv: string[]): string[] {
  return ["run", "--no-config", "-q", ...runtimeFlags(), `${dir}/${BUNDLE_ENTRY}`, ...argv];
}

/**
 * The name of a source of a chunk's map (a path relative to `outdir`), as
 * the stack traces of the bundle show it: its path in the repository, or
 * `npm:NAME@VERSION/PATH` for a file of an npm package.
 */
export function sourceName(source: string, outdir: string): string {
  const path = relative(root, resolve(outdir, source)).split(sep).join("/");
  const npm = /(?:^|\/)node_modules\/\.deno\/([^/]+)\/node_modules\/(.*)$/.exec(path);
  if (npm) {
    const [, folder, inner] = npm as unknown as [string, string, string];
    // The folder of Deno's node_modules: NAME@VERSION, the scope's / as +, peers after _.
    const at = folder.indexOf("@", 1);
    const name = folder.slice(0, at).replace("+", "/");
    const version = folder.slice(at + 1).split("_")[0];
    const file = inner.startsWith(`${name}/`) ? inner.slice(name.length + 1) : inner;
    return `npm:${name}@${version}/${file}`;
  }
  return path;
}

/** The source map of a chunk: only what a stack trace needs. */
interface SourceMap {
  version: number;
  sources: string[];
  sourcesContent?: unknown;
  mappings: string;
  names?: string[];
}

/** Rewrites the maps of `outdir`: the sources named by {@linkcode sourceName}, without their text. */
function trimMaps(outdir: string): void {
  for (const entry of Deno.readDirSync(outdir)) {
    if (!entry.name.endsWith(".map")) continue;
    const file = `${outdir}/${entry.name}`;
    const map = JSON.parse(Deno.readTextFileSync(file)) as SourceMap;
    delete map.sourcesContent;
    map.sources = map.sources.map((source) => sourceName(source, outdir));
    Deno.writeTextFileSync(file, JSON.stringify(map));
  }
}

/**
 * Bundles the program into `outdir` (emptied first) with its trimmed source
 * maps. Synchronous: the tests build it at the first start of the program.
 */
export function buildBundle(outdir: string): void {
  try {
    Deno.removeSync(outdir, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const result = new Deno.Command(Deno.execPath(), {
    args: bundleArgs(outdir),
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!result.success) {
    throw new Error(`deno bundle failed: ${dec.decode(result.stderr).trim()}`);
  }
  trimMaps(outdir);
}

if (import.meta.main) {
  const [outdir] = Deno.args;
  if (outdir === undefined) throw new Error("give the output directory");
  buildBundle(outdir);
}
