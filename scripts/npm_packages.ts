/**
 * Writes the npm packages of a release from `scripts/release_targets.json`:
 * the launcher `mcp-bridge-vscode` (what `npx -y mcp-bridge-vscode@x.y.z`
 * runs) with one optional dependency per platform, and one package per
 * target that carries its binary (`os` and `cpu` set, so npm installs only
 * the one of the machine: the pattern of the `deno` and `esbuild` packages).
 *
 * Run: `deno run -P=test scripts/npm_packages.ts --version X.Y.Z
 *   [--binaries dist] [--out dist/npm] [--target TRIPLE]...`
 * The binaries are `dist/<asset name>` (scripts/compile.ts); `--target`
 * writes only those platform packages (the launcher always names all five).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  assetName,
  BINARY,
  NPM_LAUNCHER,
  npmBinaryName,
  npmPackageName,
  type ReleaseTarget,
  TARGETS,
} from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

const DESCRIPTION =
  "An MCP server of revision 2025-11-25 for VS Code in front of an MCP server of revision 2026-07-28";
const REPOSITORY = "https://github.com/mcp-bridge/mcp-bridge-vscode";

/** What the generator writes. */
export interface NpmOptions {
  readonly version: string;
  /** The directory with the binaries by their asset names. */
  readonly binaries: string;
  readonly out: string;
  /** The platform packages to write (default: all five). */
  readonly targets?: readonly ReleaseTarget[];
}

/** The package.json of the launcher. */
export function launcherManifest(version: string): Record<string, unknown> {
  return {
    name: NPM_LAUNCHER,
    version,
    description: DESCRIPTION,
    repository: REPOSITORY,
    bin: { [BINARY]: `bin/${BINARY}.js` },
    files: ["bin"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(TARGETS.map((t) => [npmPackageName(t), version])),
  };
}

/** The package.json of the platform package of a target. */
export function platformManifest(target: ReleaseTarget, version: string): Record<string, unknown> {
  return {
    name: npmPackageName(target),
    version,
    description: `The ${target.os} ${target.cpu} binary of ${NPM_LAUNCHER}`,
    repository: REPOSITORY,
    os: [target.os],
    cpu: [target.cpu],
    // The binaries of Linux link glibc: npm skips the package on musl (Alpine).
    ...(target.os === "linux" && { libc: ["glibc"] }),
    files: ["bin"],
    preferUnplugged: true,
  };
}

/** The launcher script with the platform table of the targets. */
export async function launcherScript(): Promise<string> {
  const table = Object.fromEntries(TARGETS.map((t) => [`${t.os}-${t.cpu}`, npmPackageName(t)]));
  const template = await Deno.readTextFile(join(root, "scripts", "npm_launcher.cjs"));
  return template.replace("__BINARY__", BINARY).replace(
    "__PACKAGES__",
    JSON.stringify(table, null, 2),
  );
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(value, null, 2) + "\n");
}

/** Writes the launcher and the platform packages; returns their directories. */
export async function writeNpmPackages(options: NpmOptions): Promise<string[]> {
  const { version, out } = options;
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    throw new Error(`--version needs a version such as 1.2.3`);
  }
  const dirs: string[] = [];
  const launcher = join(out, NPM_LAUNCHER);
  await Deno.mkdir(join(launcher, "bin"), { recursive: true });
  await writeJson(join(launcher, "package.json"), launcherManifest(version));
  const script = join(launcher, "bin", `${BINARY}.js`);
  await Deno.writeTextFile(script, await launcherScript());
  await Deno.chmod(script, 0o755);
  await Deno.copyFile(join(root, "README.md"), join(launcher, "README.md"));
  dirs.push(launcher);
  for (const target of options.targets ?? TARGETS) {
    const dir = join(out, npmPackageName(target));
    await Deno.mkdir(join(dir, "bin"), { recursive: true });
    await writeJson(join(dir, "package.json"), platformManifest(target, version));
    const binary = join(dir, "bin", npmBinaryName(target));
    await Deno.copyFile(join(options.binaries, assetName(target)), binary);
    await Deno.chmod(binary, 0o755);
    await Deno.writeTextFile(
      join(dir, "README.md"),
      `# ${
        npmPackageName(target)
      }\n\nThe ${target.os} ${target.cpu} binary of \`${NPM_LAUNCHER}\`. ` +
        `Install \`${NPM_LAUNCHER}\` instead: it picks this package on this platform.\n`,
    );
    dirs.push(dir);
  }
  return dirs;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      version: { type: "string" },
      binaries: { type: "string" },
      out: { type: "string" },
      target: { type: "string", multiple: true },
    },
  });
  const named = values.target;
  const dirs = await writeNpmPackages({
    version: values.version ?? "",
    binaries: values.binaries ?? join(root, "dist"),
    out: values.out ?? join(root, "dist", "npm"),
    ...(named && { targets: TARGETS.filter((t) => named.includes(t.target)) }),
  });
  Deno.stdout.writeSync(new TextEncoder().encode(dirs.join("\n") + "\n"));
}
