/**
 * The bridge spawned by Node.js, as VS Code spawns it: Node gives the child
 * socket pairs for stdin and stdout, which the bridge reads and writes with
 * Deno's own reader and writer. The client is the v1 SDK under Node.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, programArgs, ROOT } from "./helpers.ts";

const node = (() => {
  try {
    return new Deno.Command("node", { args: ["--version"] }).outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "spawned by Node.js over socket pairs: calls in flight together and in turn, and a list",
  ignore: !node,
  async fn() {
    const { code, stdout, stderr } = await new Deno.Command("node", {
      args: [`${ROOT}tests/fixtures/node_client.mjs`, DENO, ROOT, ...programArgs([])],
      cwd: ROOT,
    }).output();
    const err = new TextDecoder().decode(stderr);
    strictEqual(code, 0, err);
    const seen = JSON.parse(new TextDecoder().decode(stdout));
    deepStrictEqual(seen.texts, [
      ...Array.from({ length: 50 }, (_, i) => `p${i}`),
      ...Array.from({ length: 20 }, (_, i) => `s${i}`),
    ]);
    ok(seen.tools.includes("echo"), `tools: ${seen.tools}`);
    strictEqual(seen.stderr, "", "the bridge wrote to stderr");
  },
});
