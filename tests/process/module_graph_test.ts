/**
 * What the bridge loads at its start (`deno info --json main.ts`): the
 * sign-in with the SDK's OAuth code, the logout, and the compiler of
 * requestedSchema (ajv, re2js) come only through dynamic imports, so a bridge
 * in front of a command does not spend their memory (about 25 MB of RSS);
 * and they are still in the graph, so `deno compile` includes them.
 */

import { ok } from "node:assert/strict";
import { DENO, ROOT } from "./helpers.ts";

interface Dependency {
  readonly code?: { readonly specifier: string };
  readonly isDynamic?: boolean;
}

interface ModuleInfo {
  readonly specifier: string;
  readonly dependencies?: readonly Dependency[];
}

/** The modules reached from main.ts through static imports, and through any import. */
async function graph(): Promise<{ atStart: Set<string>; all: Set<string> }> {
  const { stdout, success } = await new Deno.Command(DENO, {
    args: ["info", "--json", `${ROOT}main.ts`],
    cwd: ROOT,
    stderr: "null",
  }).output();
  ok(success, "deno info failed");
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    roots: string[];
    modules: ModuleInfo[];
  };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const reach = (followDynamic: boolean) => {
    const seen = new Set<string>();
    const stack = [...info.roots];
    while (stack.length > 0) {
      const specifier = stack.pop()!;
      if (seen.has(specifier)) continue;
      seen.add(specifier);
      for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
        if (dep.code && (followDynamic || !dep.isDynamic)) stack.push(dep.code.specifier);
      }
    }
    return seen;
  };
  return { atStart: reach(false), all: reach(true) };
}

const LAZY = [
  // `--version` and `--help` alone load neither the parser (node:util) nor the bridge.
  "lib/cli/command_line.ts",
  "lib/cli/bridge.ts",
  "lib/frontend/frontend.ts",
  "lib/jsonrpc/stdio_pipes.ts",
  "lib/auth/options.ts",
  "lib/legacy/auto.ts",
  "lib/legacy/passthrough.ts",
  // The HTTP link only for a URL.
  "lib/upstream/http.ts",
  "lib/upstream/sse.ts",
  "lib/auth/sign_in.ts",
  "lib/auth/logout.ts",
  "lib/doctor/main.ts",
  "lib/input/form_schema.ts",
  "lib/legacy/http_link.ts",
  "/@modelcontextprotocol/sdk@",
  "npm:@modelcontextprotocol/client",
  "npm:ajv",
  "npm:re2js",
];

Deno.test("the parser, the bridge, the HTTP link, the sign-in, the logout, doctor and the schema compiler load only when they are needed", async () => {
  const { atStart, all } = await graph();
  const has = (set: Set<string>, part: string) => [...set].some((s) => s.includes(part));
  for (const part of LAZY) {
    ok(!has(atStart, part), `${part} is a static import of main.ts`);
    ok(has(all, part), `${part} is not in the graph at all: deno compile would leave it out`);
  }
  ok(has(atStart, "lib/cli/help.ts"), "the walk of the graph found the text of --help");
  ok(![...atStart].some((s) => s.startsWith("node:")), "a node: module loads for --version");
});
