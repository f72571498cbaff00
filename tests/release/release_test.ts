/**
 * The release: the five targets and the permission set live in one place
 * (scripts/release_targets.json), and compile.ts, the npm packages and the
 * release workflow agree with it; the plan, the checksums and the smoke
 * script of the workflow run here (the workflow itself cannot).
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { parse } from "yaml";
import {
  assetName,
  BINARY,
  compileArgs,
  hostTarget,
  NPM_LAUNCHER,
  npmPackageName,
  PERMISSION_SET,
  permissionFlags,
  runtimeFlags,
  TARGETS,
} from "../../scripts/release_targets.ts";
import { chosenTargets } from "../../scripts/compile.ts";
import { launcherManifest, launcherScript, platformManifest } from "../../scripts/npm_packages.ts";
import { plan } from "../../scripts/release_plan.ts";
import { writeChecksums } from "../../scripts/checksums.ts";
import { smoke } from "../../scripts/smoke.ts";
import { DENO, programArgs, ROOT } from "../process/helpers.ts";

type Step = { run?: string; uses?: string; with?: Record<string, unknown> };
type Job = {
  "runs-on": string;
  needs?: string | string[];
  steps: Step[];
  strategy?: { matrix: { include: unknown } };
};
const workflowText = await Deno.readTextFile(`${ROOT}.github/workflows/release.yml`);
const workflow = parse(workflowText) as {
  on: unknown;
  env: Record<string, string>;
  jobs: Record<string, Job>;
};
const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
const runs = (job: string) =>
  workflow.jobs[job]!.steps.flatMap((s) => s.run === undefined ? [] : [s.run]).join("\n");

Deno.test("release: the five targets of the one list", () => {
  deepStrictEqual(TARGETS.map((t) => t.target), [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
  ]);
  // Each runner is of the target's own OS and CPU.
  for (const t of TARGETS) {
    const os = t.runner.startsWith("ubuntu")
      ? "linux"
      : t.runner.startsWith("macos")
      ? "darwin"
      : t.runner.startsWith("windows")
      ? "win32"
      : "?";
    strictEqual(os, t.os, t.runner);
    const arm = t.runner.endsWith("-arm") || (t.os === "darwin" && !t.runner.includes("intel"));
    strictEqual(arm ? "arm64" : "x64", t.cpu, t.runner);
  }
});

Deno.test("release: compile.ts builds every target with the flags of the default permission set", () => {
  strictEqual(PERMISSION_SET, "default");
  // The set is the one `deno task start` runs with (-P: the default set).
  ok(/\bdeno run -q -P main\.ts\b/.test(config.tasks.start), config.tasks.start);
  ok(config.tasks.compile.includes("scripts/compile.ts"), config.tasks.compile);
  const set = config.permissions.default as Record<string, unknown>;
  deepStrictEqual(
    permissionFlags().sort(),
    Object.keys(set).filter((k) => set[k] === true).map((k) => `--allow-${k}`).sort(),
  );
  deepStrictEqual(permissionFlags("test").filter((f) => f.startsWith("--allow-net")), [
    "--allow-net=127.0.0.1,localhost",
  ]);
  deepStrictEqual(chosenTargets([], false), [...TARGETS]);
  deepStrictEqual(chosenTargets(["--target", "aarch64-apple-darwin"], false).map((t) => t.os), [
    "darwin",
  ]);
  deepStrictEqual(chosenTargets([], true), hostTarget() ? [hostTarget()] : []);
  // The flags of the binary: the set's, and a chunk loaded when its import() runs (as denort).
  deepStrictEqual(runtimeFlags(), [...permissionFlags(), "--unstable-lazy-dynamic-imports"]);
  for (const t of TARGETS) {
    const args = compileArgs(t, `dist/${assetName(t)}`, "dist/bundle/main.js");
    // The bundle without a config file (no import map, no lockfile, no node_modules), all of it.
    deepStrictEqual(args, [
      "compile",
      "--no-config",
      ...runtimeFlags(),
      "--include",
      "dist/bundle",
      "--target",
      t.target,
      "--output",
      `dist/${assetName(t)}`,
      "dist/bundle/main.js",
    ]);
    // No -A and no flag outside the set: the binary has the sandbox contract, nothing more.
    ok(!args.includes("-A") && !args.some((a) => a.startsWith("--allow-all")));
  }
  strictEqual(assetName(TARGETS[4]!), "mcp-bridge-vscode-x86_64-pc-windows-msvc.exe");
});

Deno.test("release: the npm packages are made from the list", async () => {
  const launcher = launcherManifest("1.2.3");
  strictEqual(launcher.name, NPM_LAUNCHER);
  deepStrictEqual(launcher.bin, { [BINARY]: `bin/${BINARY}.js` });
  deepStrictEqual(
    launcher.optionalDependencies,
    Object.fromEntries(TARGETS.map((t) => [npmPackageName(t), "1.2.3"])),
  );
  deepStrictEqual(TARGETS.map(npmPackageName), [
    "mcp-bridge-vscode-linux-x64",
    "mcp-bridge-vscode-linux-arm64",
    "mcp-bridge-vscode-darwin-x64",
    "mcp-bridge-vscode-darwin-arm64",
    "mcp-bridge-vscode-win32-x64",
  ]);
  for (const t of TARGETS) {
    const manifest = platformManifest(t, "1.2.3");
    deepStrictEqual([manifest.os, manifest.cpu], [[t.os], [t.cpu]]);
  }
  // The launcher's table: process.platform-process.arch to the package.
  const script = await launcherScript();
  for (const t of TARGETS) {
    ok(script.includes(`"${t.os}-${t.cpu}": "${npmPackageName(t)}"`), script);
  }
});

Deno.test("release: the workflow takes the targets from the list, and runs the tests, compile, smoke and publish", () => {
  deepStrictEqual(workflow.on, { push: { tags: ["v*.*.*"] } });
  // No target, runner or platform package is written in the workflow: they come from the list.
  for (const t of TARGETS) {
    ok(!workflowText.includes(t.target), t.target);
    ok(!workflowText.includes(npmPackageName(t)), npmPackageName(t));
  }
  strictEqual(workflow.env.DENO, "npx -y deno@2.9.6");
  ok(runs("plan").includes("scripts/release_plan.ts"));
  // The tests: .ci/run, which runs the README's command with Deno 2.9.6 from npm.
  strictEqual(runs("test"), ".ci/run");
  ok(Deno.readTextFileSync(`${ROOT}.ci/run`).includes("npx -y deno@2.9.6 task test"));
  ok(runs("build").includes("$DENO task compile"));
  // Only the smoke job runs on the runners of the list; the others build on Linux x64.
  for (const [name, job] of Object.entries(workflow.jobs)) {
    if (name !== "smoke") strictEqual(job["runs-on"], "ubuntu-24.04", name);
  }
  const smokeJob = workflow.jobs.smoke!;
  strictEqual(smokeJob.strategy?.matrix.include, "${{ fromJSON(needs.plan.outputs.targets) }}");
  strictEqual(smokeJob["runs-on"], "${{ matrix.runner }}");
  ok(runs("smoke").includes("scripts/smoke.ts dist/${{ matrix.asset }}"), runs("smoke"));
  ok(runs("smoke").includes("SHA256SUMS"));
  deepStrictEqual(workflow.jobs.publish!.needs, ["plan", "smoke"]);
  const publish = runs("publish");
  ok(publish.includes("gh release create"));
  ok(publish.includes("dist/SHA256SUMS"));
  ok(publish.includes("scripts/npm_packages.ts --version ${{ needs.plan.outputs.version }}"));
  ok(publish.includes(".[].npm"));
  ok(publish.includes(`npm publish --provenance --access public dist/npm/${NPM_LAUNCHER}`));
  // The platform packages go first: the launcher's optional dependencies exist when it does.
  ok(publish.indexOf(".[].npm") < publish.indexOf(`dist/npm/${NPM_LAUNCHER}`));
});

Deno.test("release: the plan gives the matrix of the list and refuses a tag that is not the version", async () => {
  const outputs = await plan(`v${config.version}`);
  strictEqual(outputs.version, config.version);
  const matrix = JSON.parse(outputs.targets!) as Record<string, string>[];
  deepStrictEqual(
    matrix.map((m) => [m.target, m.runner, m.asset, m.npm]),
    TARGETS.map((t) => [
      t.target,
      t.runner,
      assetName(t),
      npmPackageName(t),
    ]),
  );
  await rejects(plan("v99.0.0"), /the tag v99\.0\.0 is not the version/);
  // The script writes the lines for $GITHUB_OUTPUT.
  const file = await Deno.makeTempFile();
  try {
    const run = await new Deno.Command(DENO, {
      args: ["run", "-q", "-P=test", `${ROOT}scripts/release_plan.ts`],
      env: { GITHUB_REF_NAME: `v${config.version}`, GITHUB_OUTPUT: file },
    }).output();
    strictEqual(run.code, 0);
    const lines = (await Deno.readTextFile(file)).split("\n");
    strictEqual(lines[0], `version=${config.version}`);
    deepStrictEqual(JSON.parse(lines[1]!.slice("targets=".length)), matrix);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test({
  name: "release: SHA256SUMS is in the format that sha256sum -c checks",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const files = [`${dir}/mcp-bridge-vscode-b`, `${dir}/mcp-bridge-vscode-a.exe`];
      await Deno.writeTextFile(files[0]!, "binary b");
      await Deno.writeTextFile(files[1]!, "binary a");
      const text = await writeChecksums(dir, files);
      strictEqual(text.split("\n")[0]!.endsWith("  mcp-bridge-vscode-a.exe"), true, text);
      const check = await new Deno.Command("sha256sum", { args: ["-c", "SHA256SUMS"], cwd: dir })
        .output();
      strictEqual(check.code, 0, new TextDecoder().decode(check.stderr));
      // A changed binary fails the check.
      await Deno.writeTextFile(files[0]!, "binary B");
      const bad = await new Deno.Command("sha256sum", { args: ["-c", "SHA256SUMS"], cwd: dir })
        .output();
      strictEqual(bad.code, 1);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("release: the smoke script passes through the bridge (the bundle, and deno run -P main.ts) and fails without it", async () => {
  const passed = [
    `ok mcp-bridge-vscode ${config.version}`,
    "ok initialize: 2025-11-25, server demo-2026",
    "ok tools/call echo",
    "ok exit 0 at the end of the input",
  ];
  // The bundle that the binary embeds, as the binary runs it; and the sources, as deno task start.
  deepStrictEqual(await smoke([DENO, ...programArgs([])]), passed);
  deepStrictEqual(await smoke([DENO, "run", "-q", "-P", `${ROOT}main.ts`]), passed);
  // A "bridge" that answers --version but not the protocol: the smoke test fails.
  const fake = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      fake,
      `if (Deno.args[0] === "--version") console.log("mcp-bridge-vscode 9.9.9");`,
    );
    await rejects(smoke([DENO, "run", "-q", fake]), /no response 1/);
  } finally {
    await Deno.remove(fake);
  }
});

Deno.test({
  name: "release: deno install -g with the flags of the permission set gives a working command",
  ignore: Deno.build.os === "windows",
  async fn() {
    const root = await Deno.makeTempDir();
    try {
      const install = await new Deno.Command(DENO, {
        args: [
          "install",
          "-g",
          "-q",
          ...permissionFlags(),
          "-n",
          BINARY,
          "-c",
          `${ROOT}deno.json`,
          `${ROOT}main.ts`,
        ],
        env: { DENO_INSTALL_ROOT: root },
      }).output();
      strictEqual(install.code, 0, new TextDecoder().decode(install.stderr));
      const lines = await smoke([`${root}/bin/${BINARY}`]);
      strictEqual(lines.length, 4);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("release: the README's install commands use the list and the permission set", async () => {
  const readme = (await Deno.readTextFile(`${ROOT}README.md`)).replaceAll(/\\\n\s*/g, "");
  ok(
    readme.includes(
      `deno install -g ${permissionFlags().join(" ")} -n ${BINARY} -c deno.json main.ts`,
    ),
  );
  ok(readme.includes(`npx -y ${NPM_LAUNCHER}@${config.version} [options] -- COMMAND`));
  for (const t of TARGETS) {
    ok(readme.includes(t.target), t.target);
    ok(readme.includes(`-${t.os}-${t.cpu}`), npmPackageName(t));
  }
  ok(readme.includes("sha256sum -c SHA256SUMS --ignore-missing"));
});
