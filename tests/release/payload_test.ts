/**
 * The binary embeds the bundle and nothing else: `deno compile` of the
 * bundle that the process tests run (`tests/process/program.ts`), with
 * DENORT_BIN set to this Deno (the output does not run, but its "Embedded
 * Files" summary is exact), embeds every chunk and source map of the bundle
 * directory, no other file (no node_modules, no TypeScript source), at most
 * {@linkcode FILES_LIMIT_BYTES}. The release workflow's smoke test runs the
 * real binaries.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { BUNDLE_ENTRY } from "../../scripts/bundle.ts";
import { compileArgs, hostTarget } from "../../scripts/release_targets.ts";
import { DENO, ROOT } from "../process/helpers.ts";
import { testBundle } from "../process/program.ts";

/** The most that the embedded files of the bridge may weigh: 3 MB (the bundle is 2.2 MB). */
const FILES_LIMIT_BYTES = 3_000_000;

/**
 * The size of the embedded files in the summary of `deno compile`
 * (`Files: 2.14MB`), in bytes: its KB and MB are of 1024.
 */
function embeddedBytes(summary: string): number {
  // deno-lint-ignore no-control-regex
  const plain = summary.replace(/\x1b\[[0-9;]*m/g, "");
  const match = /^Files:\s*([\d.]+)\s*(B|KB|MB|GB)\s*$/m.exec(plain);
  if (!match) throw new Error("the compile output has no Files: line");
  const scale =
    { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[match[2] as "B" | "KB" | "MB" | "GB"];
  return Number(match[1]) * scale;
}

/** The file names of the tree of "Embedded Files" in the summary of `deno compile`. */
function embeddedNames(summary: string): string[] {
  // deno-lint-ignore no-control-regex
  const plain = summary.replace(/\x1b\[[0-9;]*m/g, "");
  return [...plain.matchAll(/^[│├└─\s]*[├└]── (\S+) \(/gm)].map((m) => m[1]!);
}

Deno.test("payload: the summary of deno compile is read in bytes of 1024, and its files by name", () => {
  strictEqual(embeddedBytes("Embedded Files\n\nFiles: 8.5MB\nMetadata: 9.73KB\n"), 8.5 * 1024 ** 2);
  strictEqual(embeddedBytes("\x1b[0m\x1b[1mFiles:\x1b[0m 12KB\n"), 12 * 1024);
  deepStrictEqual(
    embeddedNames(
      "bundle\n├── auto-X.js (2.3KB)\n├── auto-X.js.map (2.9KB)\n└── main.js.map (51B - 0B unique)\n",
    ),
    ["auto-X.js", "auto-X.js.map", "main.js.map"],
  );
});

Deno.test({
  name:
    "payload: the compiled bridge embeds the bundle's chunks and maps, nothing else, at most 3 MB",
  ignore: hostTarget() === undefined,
  async fn() {
    const bundle = testBundle();
    const dir = await Deno.makeTempDir();
    try {
      const result = await new Deno.Command(DENO, {
        args: compileArgs(hostTarget()!, `${dir}/bridge`, `${bundle}/${BUNDLE_ENTRY}`),
        cwd: ROOT,
        env: { DENORT_BIN: DENO, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const summary = new TextDecoder().decode(result.stdout) +
        new TextDecoder().decode(result.stderr);
      ok(result.success, summary);
      const files = [...Deno.readDirSync(bundle)].map((e) => e.name).sort();
      ok(files.includes(BUNDLE_ENTRY) && files.includes(`${BUNDLE_ENTRY}.map`), files.join(" "));
      deepStrictEqual(embeddedNames(summary).sort(), files, summary);
      const bytes = embeddedBytes(summary);
      ok(bytes <= FILES_LIMIT_BYTES, `${bytes} bytes embedded:\n${summary}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
