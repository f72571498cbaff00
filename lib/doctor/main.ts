/**
 * `mcp-bridge-vscode doctor [options] (-- COMMAND | URL)`: says in plain
 * words what would break in VS Code with these options, and exits 1 when
 * something would. It takes the command line of the server entry (main.ts
 * parses it), starts the upstream as the bridge does, and signs in never.
 *
 * @module
 */

import { createLogger, type Logger, SILENT_LOGGER } from "../log.ts";
import type { Limits } from "../settings/limits.ts";
import type { Profile } from "../settings/profile.ts";
import type { AuthSettings } from "../auth/options.ts";
import { connectRemote, type RemoteTarget } from "../upstream/http_options.ts";
import type { Connect } from "../upstream/link.ts";
import { spawnStdioLink } from "../upstream/stdio.ts";
import { probeUpstream } from "./probe.ts";
import { Report } from "./report.ts";
import { checkSandbox, sandboxNeeds, type SandboxSnippet } from "./sandbox.ts";
import { checkSignIn, type SignInState, StoredToken } from "./sign_in_state.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";
import { legacyConnect } from "../legacy/wiring.ts";

/** The server entry that `doctor` examines: the `run` command of main.ts. */
export interface DoctorCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly name: string;
  readonly logLevel: string;
  readonly limits: Limits;
  readonly remote?: RemoteTarget;
  readonly auth?: AuthSettings;
  /** `--protocol` (`2026-07-28` or `auto`), where the command line has it. */
  readonly protocol?: string;
  /** `--tool` and `--ignore-tool`: the report names the tools that they hide. */
  readonly tools?: ToolFilter;
}

/** What `doctor` needs besides the command. */
export interface DoctorContext {
  readonly profile: Profile;
  readonly version: string;
  /** The arguments after `doctor` (for the path of --ca-file). */
  readonly argv?: readonly string[];
  readonly env?: (name: string) => string | undefined;
  /** Where the report goes (default stdout). */
  readonly write?: (text: string) => void;
  /** `--json`: the report and the snippet of the sandbox as one JSON document. */
  readonly json?: boolean;
}

/** What the report says the upstream is: the command's file name, or the URL's origin. */
function upstreamWords(cli: DoctorCommand): string {
  if (cli.remote) return `the server at ${cli.remote.url.origin} (path and query not shown)`;
  const file = cli.command.split(/[\\/]/).pop() ?? cli.command;
  return `the command ${file} (arguments not shown)`;
}

/** What the checks of one upstream found: the report, and the snippet of the sandbox. */
export interface Examined {
  readonly report: Report;
  readonly snippet: SandboxSnippet | null;
}

/**
 * Runs the checks and writes the report; resolves with the exit code: 1
 * when something would break in VS Code, else 0.
 */
export async function runDoctor(cli: DoctorCommand, context: DoctorContext): Promise<number> {
  const { report, snippet } = await examine(cli, context);
  const write = context.write ?? ((text: string) => {
    Deno.stdout.writeSync(new TextEncoder().encode(text));
  });
  write(
    context.json
      ? `${JSON.stringify({ report: report.json(), snippet }, null, 2)}\n`
      : report.text(),
  );
  return report.breaks > 0 ? 1 : 0;
}

/** The checks of one upstream (`runDoctor`, and each upstream of `doctor serve`). */
export async function examine(cli: DoctorCommand, context: DoctorContext): Promise<Examined> {
  const env = context.env ?? ((name: string) => Deno.env.get(name));
  const report = new Report();
  const log: Logger = cli.logLevel === "debug"
    ? createLogger(`${context.profile.name} doctor`, "debug")
    : SILENT_LOGGER;
  report.add("note", `mcp-bridge-vscode ${context.version} doctor: ${upstreamWords(cli)}.`);
  const sandbox = env("SANDBOX_RUNTIME") === "1";
  let signIn: SignInState | undefined;
  if (cli.remote && cli.auth) {
    signIn = await checkSignIn(cli.auth, cli.remote.url.href, env, report);
  } else if (cli.remote) {
    report.add(
      "note",
      "The Authorization header of --header-env is sent: the bridge does no sign-in.",
    );
  }
  const stored = new StoredToken(signIn);
  const connect: Connect = cli.remote
    ? connectRemote(cli.remote, { env, ...(signIn && { tokenSource: stored }) })
    : () =>
      spawnStdioLink({
        command: cli.command,
        args: cli.args,
        maxLineBytes: cli.limits.max_line_bytes,
        stopGraceMs: cli.limits.child_stop_grace_ms,
      });
  const probe = await probeUpstream({
    connect,
    limits: cli.limits,
    profile: context.profile,
    name: cli.name,
    version: context.version,
    log,
    passThrough: cli.protocol === "auto",
    ...(cli.tools && { tools: cli.tools }),
    // The pass-through of a URL speaks the 2025-11-25 transport (its session), as the bridge.
    ...(cli.remote && cli.protocol === "auto" && {
      legacyConnect: legacyConnect(cli.remote, connect, signIn ? { tokenSource: stored } : {})
        .connect,
    }),
  }, report);
  const signInNeeded = stored.challenged !== undefined;
  if (signInNeeded && !probe.ready) {
    // The break of the probe is the sign-in that doctor does not do: say what VS Code will do.
    const last = report.findings.at(-1);
    if (last?.mark === "break") report.findings.pop();
    report.add(
      sandbox ? "note" : "note",
      `The server asks for a sign-in (HTTP status ${stored.challenged}): ${
        signIn?.usableToken
          ? "the stored token is refused, so the bridge signs in again (a browser opens)."
          : "at the first start in VS Code the bridge signs in (a browser opens)."
      } Its capabilities are known after the sign-in.`,
    );
  }
  let snippet: SandboxSnippet | null = null;
  if (sandbox) {
    const needs = sandboxNeeds(cli.remote, signIn, signInNeeded);
    snippet = checkSandbox(cli.name, needs, signIn, signInNeeded, cli.remote === undefined, report);
  }
  return { report, snippet };
}

/** The `doctor` subcommand for main.ts: the parsed command line of the server entry. */
export function doctorMain(
  cli: { readonly kind: string } & Partial<DoctorCommand>,
  context: DoctorContext,
): Promise<number> {
  if (cli.kind !== "run" || cli.command === undefined || cli.limits === undefined) {
    return Promise.resolve(2);
  }
  return runDoctor(cli as DoctorCommand, {
    ...context,
    argv: context.argv ?? Deno.args.slice(1),
  });
}
