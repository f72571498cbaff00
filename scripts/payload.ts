/**
 * What `deno compile` embeds in the binary: the program's runtime graph and
 * nothing else. The npm packages embedded are only those the program's
 * module graph reaches (`--exclude-unused-npm`, from Deno's npm cache:
 * `--node-modules-dir=none`), not every package of deno.json (the tests'
 * servers, browsers and suites), and of those packages only the files that
 * can run: no source map, no type declaration or TypeScript source, no
 * document, and no CommonJS copy of a package that the program loads as
 * ES modules ({@linkcode ESM_ONLY}).
 *
 * deno.json turns on `lazy-dynamic-imports`: `deno run` loads the module
 * behind an `import()` when it runs, not with the program's graph at the
 * start (so `--version` reads no module of the bridge). `deno compile` then
 * follows static imports only, so the compile names every module of the
 * program with `--include` ({@linkcode Payload.includes}); `deno info`
 * still follows the `import()` calls.
 *
 * `scripts/compile.ts` builds with {@linkcode payloadPlan};
 * `tests/release/payload_test.ts` measures the embedded files against
 * {@linkcode PAYLOAD_LIMIT_BYTES}.
 *
 * @module
 */

import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath as fromFileUrl, pathToFileURL as toFileUrl } from "node:url";

/** The most the embedded files of the bridge may weigh: 12 MB. */
export const PAYLOAD_LIMIT_BYTES = 12_000_000;

/** The flags that embed only the npm packages of the module graph. */
export const NPM_PAYLOAD_FLAGS: readonly string[] = [
  "--node-modules-dir=none",
  "--exclude-unused-npm",
];

/**
 * The packages that ship ES modules and a CommonJS copy, where the program
 * imports the ES modules and nothing of the program requires the copy:
 * the SDK v2 client and core, the v1 SDK (its client and types, as ES
 * modules), zod (imported as `zod/v4` by the SDKs' ES modules).
 */
export const ESM_ONLY: ReadonlySet<string> = new Set([
  "@modelcontextprotocol/client",
  "@modelcontextprotocol/core",
  "@modelcontextprotocol/sdk",
  "zod",
]);

/** Whether the file `path` (relative to its package, with `/`) of the npm package `name` never runs. */
export function neverRuns(name: string, path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  if (base === "package.json") return false;
  // Source maps, and the type declarations and TypeScript sources (Deno runs no TypeScript of a package).
  if (/\.map$/.test(base) || /\.(d\.)?[mc]?ts$/.test(base)) return true;
  if (/\.(md|markdown)$/i.test(base) && !/^licen[cs]e/i.test(base)) return true;
  if (ESM_ONLY.has(name)) {
    if (/\.cjs$/.test(base)) return true;
    if (/(^|\/)cjs\//.test(path)) return true;
  }
  return false;
}

/** `deno info --json` of an entry: its modules and the npm packages of the lockfile. */
export interface Info {
  readonly modules: readonly {
    readonly kind?: string;
    readonly specifier?: string;
    readonly npmPackage?: string;
  }[];
  readonly npmPackages: Record<
    string,
    { readonly name: string; readonly dependencies: readonly string[]; readonly localPath?: string }
  >;
}

/** The npm packages that the module graph of `info` reaches, with their dependencies. */
export function reachedPackages(info: Info): Info["npmPackages"][string][] {
  const seen = new Set<string>();
  const queue = info.modules.flatMap((m) => m.kind === "npm" && m.npmPackage ? [m.npmPackage] : []);
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(info.npmPackages[id]?.dependencies ?? []));
  }
  return [...seen].flatMap((id) => info.npmPackages[id] ?? []);
}

/** The files of a directory, recursively, relative to `root` with `/`. */
function* filesOf(root: string, dir = root): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* filesOf(root, path);
    else yield relative(root, path).split(sep).join("/");
  }
}

/** What a compile of the program embeds beyond its static graph, and what it leaves out. */
export interface Payload {
  /**
   * The program's own modules (all but the entry), for `--include`: those
   * loaded by `import()` are not in the static graph that `deno compile`
   * follows with `lazy-dynamic-imports`.
   */
  readonly includes: readonly string[];
  /** The files of the embedded npm packages that never run, for `--exclude`. */
  readonly excludes: readonly string[];
}

/** The `--include` and `--exclude` paths of a compile of `entry` (a path under `cwd`). */
export async function payloadPlan(entry: string, cwd: string): Promise<Payload> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ...NPM_PAYLOAD_FLAGS.slice(0, 1), entry],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    throw new Error(`deno info failed: ${new TextDecoder().decode(result.stderr).trim()}`);
  }
  const info = JSON.parse(new TextDecoder().decode(result.stdout)) as Info;
  const excludes: string[] = [];
  for (const pkg of reachedPackages(info)) {
    if (pkg.localPath === undefined) continue;
    excludes.push(...excludedIn(pkg.localPath, pkg.name));
  }
  return { includes: ownModules(info, entry), excludes };
}

/** The paths of the local modules of `info`, but `entry`'s. */
export function ownModules(info: Info, entry: string): string[] {
  const root = toFileUrl(resolve(entry)).href;
  return info.modules.flatMap(({ specifier }) =>
    specifier?.startsWith("file:") && specifier !== root ? [fromFileUrl(specifier)] : []
  );
}

/** The paths to exclude of one package directory: directories where nothing runs, as one path. */
function excludedIn(root: string, name: string): string[] {
  const files = [...filesOf(root)];
  const runs = new Set<string>();
  for (const file of files) {
    if (neverRuns(name, file)) continue;
    // Every directory above a file that runs is kept.
    for (let at = file.lastIndexOf("/"); at > 0; at = file.lastIndexOf("/", at - 1)) {
      runs.add(file.slice(0, at));
    }
  }
  const out = new Set<string>();
  for (const file of files) {
    if (!neverRuns(name, file)) continue;
    // The highest directory of the file with nothing that runs, or the file itself.
    const parts = file.split("/");
    let path = file;
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (!runs.has(dir)) {
        path = dir;
        break;
      }
    }
    out.add(path);
  }
  return [...out].map((path) => join(root, ...path.split("/")));
}

/**
 * The size of the embedded files in the summary of `deno compile`
 * (`Files: 8.68MB`), in bytes: its KB and MB are of 1024.
 */
export function embeddedBytes(summary: string): number {
  // deno-lint-ignore no-control-regex
  const plain = summary.replace(/\x1b\[[0-9;]*m/g, "");
  const match = /^Files:\s*([\d.]+)\s*(B|KB|MB|GB)\s*$/m.exec(plain);
  if (!match) throw new Error("the compile output has no Files: line");
  const scale =
    { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[match[2] as "B" | "KB" | "MB" | "GB"];
  return Number(match[1]) * scale;
}
