/**
 * The program that the process tests run: the bundle of the current sources
 * (`scripts/bundle.ts`), run as the release binary runs it (no config file,
 * the flags that `deno compile` bakes in). What the binary embeds is what
 * the tests ran.
 *
 * The bundle is built once for a set of sources: its directory under
 * `dist/test-bundles/` is named by a hash of everything it is made of (the
 * sources, deno.json, the lockfile, the bundle script, the Deno version).
 * The first test that starts the program builds it under a file lock (2 to
 * 5 s on two cores; the first `deno bundle` of a machine also fetches
 * esbuild from npm); the others, in this process's workers or in another
 * `deno test`, wait for the lock and find it built. A change of a source
 * gives a new directory: a stale bundle is never run. Bundles of other
 * sources built more than an hour ago are removed.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { buildBundle, bundleRunArgs } from "../../scripts/bundle.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** What the bundle is made of, besides the files under `lib/`. */
const INPUTS = ["main.ts", "deno.json", "deno.lock", "scripts/bundle.ts"];

/** How long a bundle of other sources stays after its build, in ms. */
const KEEP_MS = 3600_000;

/** The files under `dir` (relative to the root), sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(`${root}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out.sort();
}

/** The files that the bundle is made of (relative to the root): its key hashes them. */
export function bundleInputs(): string[] {
  return [...INPUTS, ...filesUnder("lib")];
}

/** The hash of everything the bundle is made of. */
function bundleKey(): string {
  const hash = createHash("sha256").update(Deno.version.deno);
  for (const file of bundleInputs()) {
    hash.update(`\0${file}\0`).update(Deno.readFileSync(`${root}${file}`));
  }
  return hash.digest("hex").slice(0, 16);
}

/** Removes the bundles of other sources built more than {@linkcode KEEP_MS} ago. */
function removeOld(dir: string, keep: string): void {
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.isDirectory || entry.name === keep) continue;
    const path = `${dir}/${entry.name}`;
    const built = Deno.statSync(path).mtime?.getTime() ?? 0;
    if (Date.now() - built > KEEP_MS) Deno.removeSync(path, { recursive: true });
  }
}

let built: string | undefined;

/** The directory of the bundle of the current sources; builds it the first time. */
export function testBundle(): string {
  if (built !== undefined) return built;
  const base = `${root}dist/test-bundles`;
  Deno.mkdirSync(base, { recursive: true });
  const key = bundleKey();
  const dir = `${base}/${key}`;
  const lock = Deno.openSync(`${base}/.lock`, { create: true, write: true });
  try {
    lock.lockSync(true);
    try {
      Deno.statSync(dir);
    } catch {
      // Built aside and renamed: a directory of the key is always whole.
      const temp = `${base}/.${key}-${crypto.randomUUID()}`;
      buildBundle(temp);
      Deno.renameSync(temp, dir);
      removeOld(base, key);
    }
  } finally {
    lock.close();
  }
  built = dir;
  return dir;
}

/** The arguments of `deno` that run the program under test with the command line `argv`. */
export function programArgs(argv: readonly string[]): string[] {
  return bundleRunArgs(testBundle(), ...argv);
}
