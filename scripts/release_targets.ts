/**
 * The one place of the release: the five compile targets, the permission set
 * they are built with, and the names derived from them (the release assets
 * and the npm packages). `scripts/compile.ts`, `scripts/npm_packages.ts` and
 * `.github/workflows/release.yml` (its `plan` job reads the JSON file) all
 * take them from `scripts/release_targets.json`;
 * `tests/release/release_test.ts` checks that they agree.
 *
 * @module
 */

import { dirname } from "node:path";
import release from "./release_targets.json" with { type: "json" };
import config from "../deno.json" with { type: "json" };

/** One compile target with its npm platform and the GitHub runner of its OS. */
export interface ReleaseTarget {
  /** The target triple of `deno compile --target`. */
  readonly target: string;
  /** The `os` of npm (process.platform). */
  readonly os: "linux" | "darwin" | "win32";
  /** The `cpu` of npm (process.arch). */
  readonly cpu: "x64" | "arm64";
  /** The GitHub Actions runner that smoke-tests the binary on its own OS. */
  readonly runner: string;
}

/** The name of the executable, and the prefix of the assets and the npm packages. */
export const BINARY: string = release.binary;

/** The permission set of deno.json that the binaries are built with: the sandbox contract. */
export const PERMISSION_SET: string = release.permissionSet;

/** The npm package that users run with npx. */
export const NPM_LAUNCHER: string = release.npmLauncher;

/** The five targets. */
export const TARGETS: readonly ReleaseTarget[] = release.targets as ReleaseTarget[];

/** The file name of the binary of a target in a release (and in dist/). */
export function assetName(target: ReleaseTarget): string {
  return `${BINARY}-${target.target}${target.os === "win32" ? ".exe" : ""}`;
}

/** The npm package that carries the binary of a target. */
export function npmPackageName(target: ReleaseTarget): string {
  return `${BINARY}-${target.os}-${target.cpu}`;
}

/** The file name of the binary inside its npm package (`bin/`). */
export function npmBinaryName(target: ReleaseTarget): string {
  return target.os === "win32" ? `${BINARY}.exe` : BINARY;
}

/**
 * The `--allow-*` flags of the permission set of deno.json: `deno compile`
 * and `deno install -g` get these flags, made from the set. (`deno install -g -P`
 * of Deno 2.9.6 writes a shim without the set's permissions: the installed
 * command then cannot start its upstream.)
 *
 * @example
 * ```ts
 * import { permissionFlags } from "./release_targets.ts";
 * if (!permissionFlags().includes("--allow-run")) throw new Error();
 * ```
 */
export function permissionFlags(set: string = PERMISSION_SET): string[] {
  const sets = config.permissions as Record<string, Record<string, boolean | string[]>>;
  const permissions = sets[set];
  if (permissions === undefined) throw new Error(`deno.json has no permission set ${set}`);
  const flags: string[] = [];
  for (const [name, value] of Object.entries(permissions)) {
    if (value === true) flags.push(`--allow-${name}`);
    else if (Array.isArray(value) && value.length > 0) {
      flags.push(`--allow-${name}=${value.join(",")}`);
    }
  }
  return flags;
}

/**
 * The flags that `deno compile` bakes into the binary, and with which the
 * tests and the benchmarks run the bundle (`scripts/bundle.ts`): those of
 * the permission set, and `lazy-dynamic-imports`. A compiled program builds
 * no module graph: it loads a chunk when its `import()` runs; `deno run`
 * does the same only with this flag (without it, it reads and parses every
 * chunk behind an `import()` at the start).
 */
export function runtimeFlags(): string[] {
  return [...permissionFlags(), "--unstable-lazy-dynamic-imports"];
}

/**
 * The `deno compile` arguments of a target: the bundle whose first chunk is
 * `entry` (`scripts/bundle.ts`), without a config file, with
 * {@linkcode runtimeFlags}. The bundle's directory is included whole: every
 * chunk and its source map (the compile follows no `import()` with
 * `lazy-dynamic-imports`).
 */
export function compileArgs(target: ReleaseTarget, output: string, entry: string): string[] {
  return [
    "compile",
    "--no-config",
    ...runtimeFlags(),
    "--include",
    dirname(entry),
    "--target",
    target.target,
    "--output",
    output,
    entry,
  ];
}

/** The target of this machine, when it is one of the five. */
export function hostTarget(): ReleaseTarget | undefined {
  const os = Deno.build.os === "windows" ? "win32" : Deno.build.os;
  const cpu = Deno.build.arch === "x86_64" ? "x64" : "arm64";
  return TARGETS.find((t) => t.os === os && t.cpu === cpu);
}
