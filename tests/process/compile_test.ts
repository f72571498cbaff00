/** A smoke test of the compiled binary; it runs only where DENORT_BIN is set. */

import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { ROOT } from "./helpers.ts";

const denort = Deno.env.get("DENORT_BIN");

Deno.test({
  name: denort
    ? "the compiled binary answers --version and ping"
    : "compiled binary smoke test (skipped: DENORT_BIN is not set)",
  ignore: !denort,
  async fn() {
    const build = await new Deno.Command(Deno.execPath(), { args: ["task", "compile"], cwd: ROOT })
      .output();
    strictEqual(build.code, 0);
    const host = `${Deno.build.arch}-${Deno.build.vendor}-linux-gnu`;
    const binary = `${ROOT}dist/mcp-bridge-vscode-${host}`;
    const version = await new Deno.Command(binary, { args: ["--version"] }).output();
    match(new TextDecoder().decode(version.stdout), /^mcp-bridge-vscode /);
    const child = new Deno.Command(binary, {
      args: ["--", "true"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'));
    await writer.close();
    const out = await child.output();
    deepStrictEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
      jsonrpc: "2.0",
      id: 1,
      result: {},
    });
    // The permissions are built in: the binary prints no notice of the config's permissions.
    strictEqual(new TextDecoder().decode(out.stderr), "");
  },
});
