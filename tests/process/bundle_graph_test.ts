/**
 * What the release binary loads in each mode: the chunks of the bundle
 * (`scripts/bundle.ts`, the one the process tests run) that a mode loads at
 * its start, read from `deno info --json` of the bundle (its static imports
 * and its `import()` calls) and from the chunks' source maps (which sources
 * each chunk holds). Each `import()` of the program is a split point; a mode
 * loads the static closure of `main.js` and of the chunk of each `import()`
 * it runs ({@linkcode MODES}: a new mode is one line there); and the tests'
 * npm packages are not in the bundle at all. Also: a stack trace of the
 * bundle names the sources (the linked source maps), as a user's bug report
 * of the binary would.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { bundleRunArgs } from "../../scripts/bundle.ts";
import { DENO, ROOT } from "./helpers.ts";
import { bundleInputs, testBundle } from "./program.ts";

interface ModuleInfo {
  readonly specifier: string;
  readonly dependencies?: readonly { code?: { specifier: string }; isDynamic?: boolean }[];
}

/** The chunks of the bundle in `dir`: their imports, and the sources that each one holds. */
async function chunkGraph(dir: string) {
  const { stdout, success } = await new Deno.Command(DENO, {
    args: ["info", "--no-config", "--json", `${dir}/main.js`],
    stderr: "null",
  }).output();
  ok(success, "deno info of the bundle failed");
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    roots: string[];
    modules: ModuleInfo[];
  };
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const sources = (chunk: string): string[] => {
    if (!chunk.startsWith("file:")) return [];
    const map = JSON.parse(Deno.readTextFileSync(new URL(`${chunk}.map`))) as { sources: string[] };
    return map.sources;
  };
  /** The chunks (and node: modules) that `roots` load: their static imports, transitively. */
  const closure = (roots: readonly string[]): Set<string> => {
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length > 0) {
      const specifier = stack.pop()!;
      if (seen.has(specifier)) continue;
      seen.add(specifier);
      for (const dep of modules.get(specifier)?.dependencies ?? []) {
        if (dep.code && !dep.isDynamic) stack.push(dep.code.specifier);
      }
    }
    return seen;
  };
  const dynamic = new Set(
    info.modules.flatMap((m) =>
      (m.dependencies ?? []).flatMap((d) => d.isDynamic && d.code ? [d.code.specifier] : [])
    ),
  );
  /**
   * The chunk that an `import()` of the source `path` loads: esbuild names it
   * after the source (`bridge-HASH.js`), and its closure holds the source.
   */
  const entryOf = (path: string): string => {
    const stem = path.slice(path.lastIndexOf("/") + 1).replace(/\.ts$/, "");
    const found = [...dynamic].filter((chunk) =>
      new RegExp(`/${stem}-[A-Z0-9]+\\.js$`).test(chunk) &&
      [...closure([chunk])].some((c) => sources(c).includes(path))
    );
    ok(found.length === 1, `${path}: no single chunk behind an import(): ${found.join(", ")}`);
    return found[0]!;
  };
  /** The sources and node: modules of `chunks` and of their static imports. */
  const held = (chunks: readonly string[]): string[] =>
    [...closure(chunks)].flatMap((c) => c.startsWith("node:") ? [c] : sources(c));
  return {
    /** What a mode loads at its start: main.js, then the chunk of each import() it runs. */
    loaded: (imports: readonly string[]) => held([...info.roots, ...imports.map(entryOf)]),
    entryOf,
    /** Every source of the bundle. */
    all: held([...info.roots, ...dynamic]),
  };
}

const graph = await chunkGraph(testBundle());

/** What every mode but `--version` and `--help` alone loads first (lib/cli/run.ts). */
const COMMAND_LINE = [
  "lib/cli/command_line.ts",
  "lib/auth/options.ts",
  "lib/cli/usage.ts",
  "lib/upstream/http_options.ts",
];
/** The bridge: its wiring, then its ready state while the upstream starts. */
const BRIDGE = [...COMMAND_LINE, "lib/cli/bridge.ts", "lib/frontend/ready.ts"];
/** What a URL upstream loads: the HTTP link. */
const URL_LINK = ["lib/upstream/http.ts", "lib/http/post_transport.ts"];
/** The pass-through of `--protocol auto` (and its HTTP link with the v1 SDK). */
const PASS_THROUGH = ["lib/legacy/auto.ts", "lib/legacy/passthrough.ts", "lib/legacy/http_link.ts"];
/** The sign-in of a URL. */
const SIGN_IN = ["lib/auth/sign_in.ts", "lib/auth/store.ts", "lib/auth/browser.ts"];

/**
 * The modes: the `import()` calls each runs from the start (by source), and
 * what its start must not load (a part of a source's path, `npm:` or
 * `node:`: a node: module starts Deno's Node.js compatibility layer, tens of
 * ms and MiB at each start).
 */
const MODES: readonly { mode: string; imports: readonly string[]; never: readonly string[] }[] = [
  {
    mode: "--version",
    imports: [],
    never: ["node:", "npm:", "lib/cli/help.ts", "lib/cli/command_line.ts", "lib/cli/bridge.ts"],
  },
  { mode: "--help", imports: ["lib/cli/help.ts"], never: ["node:", "npm:", "lib/cli/bridge.ts"] },
  {
    mode: "a bridge in front of a command",
    imports: BRIDGE,
    never: ["node:", "npm:", ...PASS_THROUGH, "lib/upstream/http.ts", ...SIGN_IN],
  },
  {
    mode: "a bridge in front of a URL without sign-in",
    imports: [...BRIDGE, ...URL_LINK],
    never: [...PASS_THROUGH, ...SIGN_IN, "npm:@modelcontextprotocol/sdk@"],
  },
  {
    mode: "a bridge in front of a URL that signs in",
    imports: [...BRIDGE, ...URL_LINK, ...SIGN_IN, "lib/auth/sign_in_fetch.ts"],
    never: [...PASS_THROUGH, "npm:@modelcontextprotocol/sdk@", "npm:ajv@", "npm:re2js@"],
  },
  {
    mode: "--protocol auto in front of a command",
    imports: [...BRIDGE, "lib/legacy/auto.ts", "lib/legacy/passthrough.ts"],
    never: ["lib/upstream/http.ts", ...SIGN_IN, "npm:ajv@"],
  },
  { mode: "login", imports: [...COMMAND_LINE, "lib/auth/login.ts"], never: PASS_THROUGH },
  { mode: "logout", imports: [...COMMAND_LINE, "lib/auth/logout.ts"], never: PASS_THROUGH },
  {
    mode: "serve in front of a command",
    imports: [...COMMAND_LINE, "lib/serve/serve_command.ts", "lib/serve/main.ts"],
    never: ["node:", ...PASS_THROUGH, "lib/upstream/http.ts", ...SIGN_IN],
  },
  {
    mode: "doctor",
    imports: [...COMMAND_LINE, "lib/doctor/main.ts"],
    never: ["lib/cli/bridge.ts", "lib/auth/login.ts"],
  },
];

Deno.test("bundle: each mode loads at its start only what it runs", () => {
  for (const { mode, imports, never } of MODES) {
    const loaded = graph.loaded(imports);
    for (const path of imports) ok(loaded.includes(path), `${mode}: ${path} is not loaded`);
    const wrong = loaded.filter((source) => never.some((part) => source.includes(part)));
    deepStrictEqual(wrong, [], `${mode} loads at its start: ${wrong.join(", ")}`);
  }
  // --version and --help alone load the few modules of their answer (and the log's sink).
  deepStrictEqual(graph.loaded([]).filter((s) => s.startsWith("lib/")).sort(), [
    "lib/cli/run.ts",
    "lib/clock.ts",
    "lib/jsonrpc/abortable.ts",
    "lib/jsonrpc/byte_io.ts",
    "lib/log.ts",
    "lib/log_sink.ts",
    "lib/version.ts",
    "lib/vscode/profile.ts",
  ]);
});

/** The literal `import()` calls of the program's sources: the source that calls, the source loaded. */
function importCalls(): { from: string; path: string }[] {
  const out: { from: string; path: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (path.endsWith(".ts")) {
        const text = Deno.readTextFileSync(`${ROOT}${path}`);
        // Not `typeof import(...)`: a type, erased.
        for (const [, spec] of text.matchAll(/(?<!typeof )\bimport\(\s*"(\.[^"]+)"\s*\)/g)) {
          const url = new URL(spec!, `file:///${path}`);
          out.push({ from: path, path: url.pathname.slice(1) });
        }
      }
    }
  };
  walk("lib");
  return out;
}

Deno.test("bundle: every import() of the program is a split point (a chunk of its own, not at the start)", () => {
  const calls = importCalls();
  ok(calls.length >= 20, `only ${calls.length} import() calls found`);
  const atStart = new Set(graph.loaded([]));
  for (const { from, path } of calls) {
    graph.entryOf(path);
    ok(!atStart.has(path), `${path} (an import() of ${from}) loads with main.js`);
  }
});

Deno.test("bundle: the program and its npm packages are there, the tests' packages are not", () => {
  for (const part of ["lib/cli/bridge.ts", "npm:@modelcontextprotocol/client@", "npm:ajv@"]) {
    ok(graph.all.some((source) => source.includes(part)), `${part} is not in the bundle`);
  }
  const tests = [
    "npm:playwright-core@",
    "npm:oidc-provider@",
    "npm:@modelcontextprotocol/conformance@",
    "npm:@modelcontextprotocol/server-",
    "npm:@anthropic-ai/sandbox-runtime@",
    "npm:yaml@",
  ];
  const wrong = graph.all.filter((source) => tests.some((part) => source.startsWith(part)));
  deepStrictEqual(wrong, [], "the tests' packages are in the bundle");
});

Deno.test("bundle: the tests' bundle is named by a hash of every source it holds (never stale)", () => {
  const inputs = new Set(bundleInputs());
  const own = graph.all.filter((source) => !/^(npm|node):/.test(source));
  ok(own.includes("main.ts") && own.includes("lib/cli/run.ts"), own.join(" "));
  deepStrictEqual(own.filter((source) => !inputs.has(source)), []);
});

Deno.test("bundle: a stack trace names the source files and lines (the linked source maps)", async () => {
  const dir = testBundle();
  // A probe that the program's own write of --version runs into: it prints the stack there.
  const probe = await Deno.makeTempFile({ suffix: ".js" });
  try {
    await Deno.writeTextFile(
      probe,
      `const write = Deno.stdout.write.bind(Deno.stdout);
Deno.stdout.write = (bytes) => {
  Deno.stderr.writeSync(new TextEncoder().encode(new Error("probe").stack + "\\n"));
  return write(bytes);
};\n`,
    );
    const [run, ...rest] = bundleRunArgs(dir, "--version");
    const out = await new Deno.Command(DENO, {
      args: [run!, "--preload", probe, ...rest],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stack = new TextDecoder().decode(out.stderr);
    // The line of lib/cli/run.ts that writes the text of --version.
    const line = Deno.readTextFileSync(`${ROOT}lib/cli/run.ts`).split("\n")
      .findIndex((text) => text.includes("await Deno.stdout.write(")) + 1;
    ok(line > 0);
    ok(stack.includes(`/lib/cli/run.ts:${line}:`), stack);
    ok(!/main\.js:\d+:\d+/.test(stack), `a frame of the bundle is not mapped:\n${stack}`);
  } finally {
    await Deno.remove(probe);
  }
});

/** Deno's web streams: loaded the first time a program names `ReadableStream` or `WritableStream`. */
const WEB_STREAMS = "ext:deno_web/06_streams.js";

/**
 * The scripts that V8 compiled or deserialized in a run of `deno` with `args`
 * (its log of function events, `--log-function-events`): Deno's own modules
 * (`ext:...`) are among them from the moment they load.
 */
async function scriptsOf(args: readonly string[]): Promise<Set<string>> {
  const log = await Deno.makeTempFile({ suffix: ".log" });
  try {
    const [run, ...rest] = args;
    const out = await new Deno.Command(DENO, {
      args: [
        run!,
        `--v8-flags=--log-function-events,--no-logfile-per-isolate,--logfile=${log}`,
        ...rest,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    ok(out.success, new TextDecoder().decode(out.stderr));
    const text = await Deno.readTextFile(log);
    // `script-details,ID,NAME,...`: one line per script.
    return new Set(
      text.split("\n").filter((line) => line.startsWith("script-details,"))
        .map((line) => line.split(",")[2]!),
    );
  } finally {
    await Deno.remove(log);
  }
}

Deno.test("bundle: --version and --help load no web stream of Deno (the log's sink tells a stream by its shape)", async () => {
  // The probe sees the streams when a script names them: the log says what loads.
  const probe = await Deno.makeTempFile({ suffix: ".js" });
  try {
    await Deno.writeTextFile(probe, "globalThis.named = typeof WritableStream;\n");
    const named = await scriptsOf(["run", "--no-config", "-q", probe]);
    ok(named.has(WEB_STREAMS), `the probe: ${[...named].join(" ")}`);
  } finally {
    await Deno.remove(probe);
  }
  for (const flag of ["--version", "--help"]) {
    const scripts = await scriptsOf(bundleRunArgs(testBundle(), flag));
    ok([...scripts].some((s) => s.endsWith("/main.js")), `${flag}: ${[...scripts].join(" ")}`);
    ok(!scripts.has(WEB_STREAMS), `${flag} loads Deno's web streams`);
  }
});
