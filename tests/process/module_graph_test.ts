/**
 * What the program loads at its start when it runs from its sources
 * (`deno task start`, `deno install -g`: `deno info --json main.ts`): the
 * sign-in with the SDK's OAuth code, the logout, and the compiler of
 * requestedSchema (ajv, re2js) come only through dynamic imports, so a bridge
 * in front of a command does not spend their memory (about 25 MB of RSS);
 * and they are still in the graph. The release binary runs the bundle, whose
 * chunks per mode `bundle_graph_test.ts` checks.
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
async function graph(
  from: readonly string[] = [],
): Promise<{ atStart: Set<string>; all: Set<string> }> {
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
    const stack = from.length > 0 ? from.map((path) => `file://${ROOT}${path}`) : [...info.roots];
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

const has = (set: Set<string>, part: string) => [...set].some((s) => s.includes(part));

const LAZY = [
  // The text of --help (and the table of flags) only for --help.
  "lib/cli/help.ts",
  // `--version` and `--help` alone load neither the parser (node:util) nor the bridge.
  "lib/cli/command_line.ts",
  "lib/cli/bridge.ts",
  "lib/frontend/frontend.ts",
  "lib/auth/options.ts",
  "lib/legacy/auto.ts",
  "lib/legacy/passthrough.ts",
  // The HTTP link only for a URL.
  "lib/upstream/http.ts",
  "lib/http/sse.ts",
  "lib/auth/sign_in.ts",
  "lib/auth/logout.ts",
  "lib/doctor/main.ts",
  // serve, its HTTP face and its shared upstream only for `serve`.
  "lib/serve/serve_command.ts",
  "lib/serve/main.ts",
  "lib/serve/face.ts",
  "lib/upstream/shared_upstream.ts",
  "lib/input/form_schema.ts",
  "lib/legacy/http_link.ts",
  "/@modelcontextprotocol/sdk@",
  "npm:@modelcontextprotocol/client",
  "npm:ajv",
  "npm:re2js",
];

Deno.test("the parser, the bridge, the HTTP link, the sign-in, the logout, doctor and the schema compiler load only when they are needed", async () => {
  const { atStart, all } = await graph();
  for (const part of LAZY) {
    ok(!has(atStart, part), `${part} is a static import of main.ts`);
    ok(has(all, part), `${part} is not in the graph at all`);
  }
  ok(has(atStart, "lib/version.ts"), "the walk of the graph found the version of --version");
  ok(![...atStart].some((s) => s.startsWith("node:")), "a node: module loads for --version");
});

// What the stdio bridge imports (lib/cli/run.ts): the command line's modules, then the wiring.
const STDIO_BRIDGE = [
  "main.ts",
  "lib/cli/command_line.ts",
  "lib/auth/options.ts",
  "lib/cli/usage.ts",
  "lib/upstream/http_options.ts",
  "lib/cli/bridge.ts",
];

Deno.test("a bridge in front of a command loads no node: module, no pass-through, no token store, no browser and nothing of serve", async () => {
  const { atStart, all } = await graph(STDIO_BRIDGE);
  ok(has(atStart, "lib/frontend/frontend.ts") && has(atStart, "lib/upstream/stdio.ts"));
  // A node: module starts Deno's Node.js compatibility layer: tens of ms and MiB at each start.
  const node = [...atStart].filter((s) => s.startsWith("node:"));
  ok(node.length === 0, `node: modules at the start of a stdio bridge: ${node.join(", ")}`);
  for (
    const part of [
      "lib/legacy/passthrough.ts",
      "lib/legacy/auto.ts",
      "lib/auth/store.ts",
      "lib/auth/browser.ts",
      "lib/auth/sign_in_fetch.ts",
      "lib/upstream/http.ts",
      "lib/serve/",
      "lib/upstream/shared_link.ts",
      "npm:",
    ]
  ) {
    ok(!has(atStart, part), `${part} loads for a stdio bridge`);
    if (part !== "npm:" && part !== "lib/serve/") {
      ok(has(all, part), `${part} is not in the graph at all`);
    }
  }
});

Deno.test("deno run loads a module behind import() only when it runs (lazy-dynamic-imports)", async () => {
  // Without it, `deno run` reads and resolves every import() of the graph at the start.
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { unstable?: string[] };
  ok(config.unstable?.includes("lazy-dynamic-imports"), JSON.stringify(config.unstable));
});
