/**
 * Writes `SHA256SUMS` for the files of a release, in the format of
 * `sha256sum` (`<hex>  <name>`), so that `sha256sum -c SHA256SUMS` (or
 * `shasum -a 256 -c`) checks a download.
 *
 * Run: `deno run -P=test scripts/checksums.ts DIR` (every file of DIR but
 * SHA256SUMS)
 *
 * @module
 */

import { basename, join } from "node:path";

/** The hex SHA-256 of a file. */
export async function sha256File(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Writes DIR/SHA256SUMS for `files` (paths), sorted by name; returns its text. */
export async function writeChecksums(dir: string, files: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const file of [...files].sort()) lines.push(`${await sha256File(file)}  ${basename(file)}`);
  const text = lines.join("\n") + "\n";
  await Deno.writeTextFile(join(dir, "SHA256SUMS"), text);
  return text;
}

if (import.meta.main) {
  const dir = Deno.args[0] ?? "dist";
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name !== "SHA256SUMS") files.push(join(dir, entry.name));
  }
  Deno.stdout.writeSync(new TextEncoder().encode(await writeChecksums(dir, files)));
}
