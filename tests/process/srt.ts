/**
 * VS Code's sandbox for the process tests: the real sandbox runtime
 * (`@anthropic-ai/sandbox-runtime`, its `srt` command, pinned in deno.json),
 * run under Deno (its package asks for Node 22; Deno runs its CLI as it runs
 * the conformance CLI), with bubblewrap, socat and ripgrep of Debian.
 *
 * - {@linkcode SRT_MISSING}: why srt cannot run here (undefined when it can);
 *   the tests are then ignored and say "skipped" with the reason.
 * - {@linkcode TestHosts}: host names of the tests in /etc/hosts (srt's proxy
 *   resolves names on the host), removed at the end.
 * - {@linkcode vscodeSettings}: srt's settings file made as VS Code makes it
 *   (`mcpSandboxService.ts`): the top-level `sandbox` of mcp.json, plus
 *   registry.npmjs.org, `~/.npm` and the server's cwd.
 * - {@linkcode SandboxedBridge}: the real program under srt, launched as VS
 *   Code launches it (`cli.js --settings FILE COMMAND ARGS`), over its pipes.
 */

import { BridgeLines, DENO, programArgs, ROOT } from "./helpers.ts";

/** srt's CLI in node_modules. */
export const SRT_CLI = `${ROOT}node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js`;

const dec = new TextDecoder();

function onPath(name: string): boolean {
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** Why the sandbox tests cannot run here, or undefined. */
async function whySrtCannotRun(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "the sandbox tests run on Linux only";
  const missing = ["bwrap", "socat", "rg"].filter((name) => !onPath(name));
  if (missing.length > 0) {
    return `${missing.join(", ")} missing (apt-get install bubblewrap socat ripgrep)`;
  }
  try {
    Deno.statSync(SRT_CLI);
  } catch {
    return "@anthropic-ai/sandbox-runtime is not installed (deno install --frozen)";
  }
  try {
    const hosts = Deno.openSync("/etc/hosts", { append: true });
    hosts.close();
  } catch {
    return "/etc/hosts cannot be written (the test hosts of srt's proxy go there; run as root)";
  }
  const dir = Deno.makeTempDirSync({ prefix: "srt-probe-" });
  try {
    const settings = `${dir}/settings.json`;
    Deno.writeTextFileSync(settings, JSON.stringify(vscodeSettings({}, dir)));
    const out = await new Deno.Command(DENO, {
      args: ["run", "-A", SRT_CLI, "--settings", settings, "true"],
      stdout: "null",
      stderr: "piped",
      stdin: "null",
    }).output();
    if (!out.success) {
      const line = dec.decode(out.stderr).trim().split("\n").at(-1) ?? "";
      return `srt cannot start a sandbox here: ${line}`;
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  return undefined;
}

/** Why srt cannot run here; undefined when it can. */
export const SRT_MISSING: string | undefined = await whySrtCannotRun();

/** The `sandbox` of mcp.json (a part of it). */
export interface McpSandbox {
  readonly network?: { readonly allowedDomains?: readonly string[] };
  readonly filesystem?: { readonly allowWrite?: readonly string[] };
}

/** srt's settings file, as VS Code writes it. */
export interface SrtSettings {
  readonly network: { allowedDomains: string[]; deniedDomains: string[] };
  readonly filesystem: { allowWrite: string[]; denyRead: string[]; denyWrite: string[] };
}

/**
 * The settings of srt for a server of mcp.json whose top-level `sandbox` is
 * `sandbox`, launched in `cwd`: VS Code adds `registry.npmjs.org`, `~/.npm`
 * and the cwd (its `_withDefaultSandboxConfig`).
 */
export function vscodeSettings(sandbox: McpSandbox, cwd: string): SrtSettings {
  return {
    network: {
      allowedDomains: [
        ...new Set([...(sandbox.network?.allowedDomains ?? []), "registry.npmjs.org"]),
      ],
      deniedDomains: [],
    },
    filesystem: {
      allowWrite: [...new Set([...(sandbox.filesystem?.allowWrite ?? []), "~/.npm", cwd])],
      denyRead: [],
      denyWrite: [],
    },
  };
}

/**
 * Host names of the tests, all on 127.0.0.1, in one line of /etc/hosts that
 * `remove` takes out again. srt's proxy resolves names on the host, and
 * refuses a loopback address unless `127.0.0.1` is listed too.
 */
export class TestHosts {
  readonly names: readonly string[];
  readonly #line: string;

  constructor(count: number) {
    const tag = crypto.randomUUID().slice(0, 8);
    this.names = Array.from({ length: count }, (_, i) => `mcp-bridge-sbx${i}-${tag}.test`);
    this.#line = `127.0.0.1 ${this.names.join(" ")} # mcp-bridge-vscode sandbox test\n`;
    const text = Deno.readTextFileSync("/etc/hosts");
    Deno.writeTextFileSync(
      "/etc/hosts",
      `${text.endsWith("\n") || text === "" ? text : `${text}\n`}${this.#line}`,
    );
  }

  /** Takes the line out of /etc/hosts (written in place: it may be a mount). */
  remove(): void {
    const text = Deno.readTextFileSync("/etc/hosts");
    if (text.includes(this.#line)) {
      Deno.writeTextFileSync("/etc/hosts", text.replace(this.#line, ""));
    }
  }
}

/** The environment of a bridge of the tests: the test's, without proxy variables, plus `env`. */
export function testEnv(env: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!/^(https?|no|all)_proxy$/i.test(name)) out[name] = value;
  }
  return { ...out, DENO_NO_UPDATE_CHECK: "1", ...env };
}

/** The command line of the program itself (the bundle, as the release binary runs it). */
export function programArgv(argv: readonly string[]): string[] {
  return [DENO, ...programArgs(argv)];
}

/** Runs `doctor --json` of the command line `argv` on the host with SANDBOX_RUNTIME=1. */
export async function doctorJson(
  argv: readonly string[],
  env: Record<string, string>,
): Promise<
  { code: number; json: { report: unknown; snippet: McpSandbox & { sandbox: McpSandbox } } }
> {
  const [command, ...args] = programArgv(["doctor", "--json", ...argv]);
  const out = await new Deno.Command(command!, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: testEnv({ ...env, SANDBOX_RUNTIME: "1" }),
    clearEnv: true,
  }).output();
  const text = dec.decode(out.stdout);
  try {
    return { code: out.code, json: JSON.parse(text) };
  } catch {
    throw new Error(`doctor --json printed no JSON: ${text}${dec.decode(out.stderr)}`);
  }
}

/**
 * The real program under srt, launched as VS Code launches a sandboxed
 * stdio server: `cli.js --settings FILE COMMAND ARGS`, in `cwd`, with the
 * settings of {@linkcode vscodeSettings}. srt adds SANDBOX_RUNTIME=1 and
 * its proxy variables itself.
 */
export class SandboxedBridge extends BridgeLines implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  #stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(
    settingsFile: string,
    argv: readonly string[],
    env: Record<string, string> = {},
    cwd = ROOT,
  ) {
    const child = new Deno.Command(DENO, {
      args: ["run", "-A", SRT_CLI, "--settings", settingsFile, ...programArgv(argv)],
      cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: testEnv(env),
      clearEnv: true,
    }).spawn();
    super(child.stdin, child.stdout);
    this.child = child;
    const stderr = child.stderr;
    this.#stderrDone = (async () => {
      for await (const text of stderr.pipeThrough(new TextDecoderStream())) this.#stderr += text;
    })();
  }

  /** What the process wrote to its stderr so far (srt's lines and the bridge's). */
  get stderr(): string {
    return this.#stderr;
  }

  /** The bridge's own log lines (`mcp-bridge-vscode ...`), not srt's. */
  get bridgeLines(): string[] {
    return this.#stderr.split("\n").filter((line) => line.includes("mcp-bridge-vscode"));
  }

  /** Closes stdin and waits for the exit; its code. */
  async exit(): Promise<number> {
    await this.closeInput();
    await this.readRest();
    const status = await this.child.status;
    await this.#stderrDone;
    return status.code;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGTERM");
    } catch {
      // exited
    }
    await this.stopReading();
    await this.child.status;
    await this.#stderrDone;
  }
}

/** Writes srt's settings into `dir`; the path of the file. */
export async function writeSettings(dir: string, settings: SrtSettings): Promise<string> {
  const file = `${dir}/vscode-mcp-sandbox-settings-${crypto.randomUUID()}.json`;
  await Deno.writeTextFile(file, JSON.stringify(settings, null, "\t"));
  return file;
}
