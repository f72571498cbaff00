/**
 * The binary embeds only what the program runs (scripts/payload.ts): `deno
 * compile` with DENORT_BIN set to this Deno (the output does not run, but its
 * "Embedded Files" summary is exact) embeds at most 12 MB, and none of the
 * packages that only the tests use. The release workflow's smoke test runs
 * the real binaries.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  embeddedBytes,
  neverRuns,
  ownModules,
  PAYLOAD_LIMIT_BYTES,
  payloadPlan,
} from "../../scripts/payload.ts";
import { compileArgs, hostTarget } from "../../scripts/release_targets.ts";
import { DENO, ROOT } from "../process/helpers.ts";

Deno.test("payload: the summary of deno compile is read in bytes of 1024", () => {
  strictEqual(embeddedBytes("Embedded Files\n\nFiles: 8.5MB\nMetadata: 9.73KB\n"), 8.5 * 1024 ** 2);
  strictEqual(embeddedBytes("\x1b[0m\x1b[1mFiles:\x1b[0m 12KB\n"), 12 * 1024);
});

Deno.test("payload: source maps, declarations and CommonJS copies of ES module packages never run", () => {
  ok(neverRuns("ajv", "dist/2020.js.map"));
  ok(neverRuns("ajv", "dist/2020.d.ts"));
  ok(neverRuns("zod", "src/v4/core/core.ts"));
  ok(neverRuns("zod", "v4/index.cjs"));
  ok(neverRuns("@modelcontextprotocol/sdk", "dist/cjs/types.js"));
  ok(neverRuns("@modelcontextprotocol/client", "dist/index.d.mts"));
  ok(neverRuns("ajv", "README.md"));
  // What a package loads stays: ajv is CommonJS, its JSON is required.
  ok(!neverRuns("ajv", "dist/2020.js"));
  ok(!neverRuns("ajv", "dist/refs/json-schema-2020-12/schema.json"));
  ok(!neverRuns("zod", "v4/index.js"));
  ok(!neverRuns("@modelcontextprotocol/client", "dist/index.mjs"));
  ok(!neverRuns("re2js", "package.json"));
  ok(!neverRuns("ajv", "LICENSE"));
});

Deno.test("payload: the modules to include are the local modules of the graph but the entry", () => {
  const info = {
    modules: [
      { kind: "esm", specifier: "file:///p/main.ts" },
      { kind: "esm", specifier: "file:///p/lib/cli/bridge.ts" },
      { kind: "npm", specifier: "npm:/ajv@8.20.0", npmPackage: "ajv@8.20.0" },
      { kind: "external", specifier: "node:net" },
    ],
    npmPackages: {},
  };
  deepStrictEqual(ownModules(info, "/p/main.ts"), ["/p/lib/cli/bridge.ts"]);
});

Deno.test({
  name: "payload: the compiled bridge embeds at most 12 MB, and nothing of the tests' packages",
  ignore: hostTarget() === undefined,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const payload = await payloadPlan(`${ROOT}main.ts`, ROOT);
      // The modules behind import() (deno.json's lazy-dynamic-imports) are named for the compile.
      for (const path of ["cli/bridge.ts", "legacy/passthrough.ts", "auth/sign_in.ts"]) {
        ok(payload.includes.includes(`${ROOT}lib/${path}`), path);
      }
      const result = await new Deno.Command(DENO, {
        args: compileArgs(hostTarget()!, `${dir}/bridge`, `${ROOT}main.ts`, payload),
        cwd: ROOT,
        env: { DENORT_BIN: DENO, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const summary = new TextDecoder().decode(result.stdout) +
        new TextDecoder().decode(result.stderr);
      ok(result.success, summary);
      const bytes = embeddedBytes(summary);
      ok(bytes <= PAYLOAD_LIMIT_BYTES, `${bytes} bytes embedded:\n${summary}`);
      for (
        const name of [
          "playwright-core",
          "oidc-provider",
          "conformance",
          "server-everything",
          "sandbox-runtime",
          "octokit",
          "yaml",
        ]
      ) {
        ok(!summary.includes(name), `${name} is embedded:\n${summary}`);
      }
      // The program's own packages are there, those of the modules behind import() too.
      for (const name of ["ajv", "re2js", "client", "sdk"]) ok(summary.includes(name), name);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
