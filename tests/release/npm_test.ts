/**
 * The npm distribution, from packed tarballs and without a registry: the
 * launcher `mcp-bridge-vscode` and the platform package of this machine with
 * a stand-in binary (a shell script) are packed with `npm pack`, installed
 * with `npm install --offline` into a temporary project, and run. The
 * launcher starts the binary of the right package with stdin and stdout
 * inherited, passes its exit code through, forwards SIGTERM, and says in one
 * line when the platform package is missing.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { writeNpmPackages } from "../../scripts/npm_packages.ts";
import {
  assetName,
  BINARY,
  hostTarget,
  NPM_LAUNCHER,
  npmPackageName,
  TARGETS,
} from "../../scripts/release_targets.ts";
import { waitFor } from "../wait.ts";

const dec = new TextDecoder();
const host = hostTarget();

function has(command: string): boolean {
  try {
    new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

const usable = host !== undefined && Deno.build.os !== "windows" && has("npm") && has("node");

/** The stand-in binary: it says which package it is, and acts on its first argument. */
const STAND_IN = (name: string) =>
  `#!/bin/sh
case "$1" in
  exit) exit "$2" ;;
  cat) echo "stand-in of ${name}: $*"; exec cat ;;
  wait)
    trap 'echo "got SIGTERM" > "$2"; exit 143' TERM
    echo ready > "$2.ready"
    # Ten seconds at most: a stand-in whose signal was lost does not outlive the test.
    i=0; while [ "$i" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done ;;
  *) echo "stand-in of ${name}: $*" ;;
esac
`;

async function run(cmd: string, args: string[], cwd: string): Promise<Deno.CommandOutput> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return out;
}

/** Packs the packages and installs `which` of them from the tarballs into a new project. */
async function installed(which: "both" | "launcher"): Promise<{ dir: string; bin: string }> {
  const dir = await Deno.makeTempDir({ prefix: "npm-launcher-" });
  const binaries = join(dir, "binaries");
  await Deno.mkdir(binaries);
  await Deno.writeTextFile(join(binaries, assetName(host!)), STAND_IN(npmPackageName(host!)));
  const packages = await writeNpmPackages({
    version: "0.0.0-test",
    binaries,
    out: join(dir, "npm"),
    targets: [host!],
  });
  const tarballs = join(dir, "tarballs");
  await Deno.mkdir(tarballs);
  const packed: string[] = [];
  for (const pkg of packages) {
    const out = await run("npm", ["pack", "--silent", "--pack-destination", tarballs], pkg);
    packed.push(join(tarballs, dec.decode(out.stdout).trim().split("\n").pop()!));
  }
  const project = join(dir, "project");
  await Deno.mkdir(project);
  await Deno.writeTextFile(
    join(project, "package.json"),
    '{"name":"p","version":"1.0.0","private":true}',
  );
  // The launcher's other optional dependencies are not in the cache: --offline skips them.
  await run("npm", [
    "install",
    "--offline",
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    ...(which === "both" ? packed : packed.slice(0, 1)),
  ], project);
  return { dir, bin: join(project, "node_modules", ".bin", BINARY) };
}

// The two tests with both packages share one install (npm pack and npm install are the cost).
Deno.test({
  name: "npm: the launcher with the package of this platform",
  ignore: !usable,
  async fn(t) {
    const { dir, bin } = await installed("both");
    try {
      await t.step(
        "the launcher runs the binary of this platform's package; stdio, arguments and the exit code pass through",
        async () => {
          const modules = [...Deno.readDirSync(join(dir, "project", "node_modules"))]
            .map((e) => e.name).filter((n) => !n.startsWith(".")).sort();
          // Only the package of this platform is installed, not the other four.
          deepStrictEqual(modules, [NPM_LAUNCHER, npmPackageName(host!)].sort());
          strictEqual(TARGETS.length, 5);
          const child = new Deno.Command(bin, {
            args: ["cat", "--name", "x", "--", "node", "server.js"],
            stdin: "piped",
            stdout: "piped",
            stderr: "piped",
          }).spawn();
          const writer = child.stdin.getWriter();
          await writer.write(
            new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'),
          );
          await writer.close();
          const out = await child.output();
          strictEqual(out.code, 0, dec.decode(out.stderr));
          strictEqual(
            dec.decode(out.stdout),
            `stand-in of ${npmPackageName(host!)}: cat --name x -- node server.js\n` +
              '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
          );
          for (const code of [0, 2, 7]) {
            const status = await new Deno.Command(bin, { args: ["exit", String(code)] }).output();
            strictEqual(status.code, code);
          }
        },
      );
      await t.step(
        "SIGTERM to the launcher reaches the binary, and its exit code comes back",
        async () => {
          const marker = join(dir, "marker");
          const child = new Deno.Command(bin, {
            args: ["wait", marker],
            stdout: "null",
            stderr: "piped",
          }).spawn();
          await waitFor("the stand-in to start", () => {
            try {
              return Deno.statSync(`${marker}.ready`).isFile;
            } catch {
              return false;
            }
          });
          child.kill("SIGTERM");
          const status = await child.status;
          strictEqual(await Deno.readTextFile(marker), "got SIGTERM\n");
          strictEqual(status.code, 143);
        },
      );
      await t.step(
        "a SIGTERM that comes as soon as the binary runs reaches it too (the launcher does not die by default and leave it behind)",
        async () => {
          // Node.js loads this before the launcher: the spawn waits until the
          // stand-in has set its trap, then the launcher gets SIGTERM at once,
          // before its next statement, the earliest a signal can find it.
          const marker = join(dir, "marker-early");
          const hook = join(dir, "early_signal.cjs");
          await Deno.writeTextFile(
            hook,
            `const cp = require("node:child_process");
const fs = require("node:fs");
const spawn = cp.spawn;
cp.spawn = (...args) => {
  const child = spawn(...args);
  while (!fs.existsSync(${JSON.stringify(`${marker}.ready`)})) {}
  process.kill(process.pid, "SIGTERM");
  return child;
};
`,
          );
          const status = await new Deno.Command(bin, {
            args: ["wait", marker],
            env: { NODE_OPTIONS: `--require=${hook}` },
            stdout: "null",
            stderr: "null",
          }).output();
          strictEqual(await Deno.readTextFile(marker), "got SIGTERM\n");
          strictEqual(status.code, 143);
          strictEqual(status.signal, null);
        },
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "npm: without the platform package, one clear line and exit 1",
  ignore: !usable,
  async fn() {
    const { dir, bin } = await installed("launcher");
    try {
      const out = await new Deno.Command(bin, { args: ["--version"] }).output();
      strictEqual(out.code, 1);
      strictEqual(out.stdout.length, 0);
      const lines = dec.decode(out.stderr).split("\n");
      strictEqual(lines.length, 2, dec.decode(out.stderr));
      strictEqual(lines[1], "");
      ok(
        lines[0]!.startsWith(
          `${BINARY}: the package ${npmPackageName(host!)} with the binary for ${host!.os}-${
            host!.cpu
          } is not installed`,
        ),
        lines[0],
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
