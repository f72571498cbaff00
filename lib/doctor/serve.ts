/**
 * `mcp-bridge-vscode doctor serve [--json] [serve options] (-- COMMAND | URL
 * | --config FILE)`: the checks of `doctor` for each upstream of a `serve`
 * command line (each line after the name of its server), then what `serve`
 * itself needs: the `mcp.json` of its `{"type": "http"}` entries, whether
 * its port is free (or a `serve` already answers there), how to start it at
 * login, and what VS Code's sandbox means for it.
 *
 * @module
 */

import { isLoopbackHost, portIsFree } from "../net/loopback.ts";
import type { ServeCommand } from "../serve/serve_command.ts";
import { type DoctorCommand, type DoctorContext, examine } from "./main.ts";
import { Report } from "./report.ts";

/** The `mcp.json` servers of a `serve`: one `{"type": "http"}` entry per endpoint. */
export function httpEntries(
  command: Pick<ServeCommand, "host" | "port" | "upstreams">,
): Record<string, { type: "http"; url: string }> {
  const host = command.host.includes(":") ? `[${command.host}]` : command.host;
  const reachable = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  const port = command.port === 0 ? "PORT" : String(command.port);
  const entries: Record<string, { type: "http"; url: string }> = {};
  for (const upstream of command.upstreams) {
    entries[upstream.name ?? upstream.cli.name] = {
      type: "http",
      url: `http://${reachable}:${port}${upstream.path}`,
    };
  }
  return entries;
}

/**
 * Whether the port of `serve` is free, held by a `serve` (its endpoint
 * answers a POST without a session with its own refusal), or by another
 * program.
 */
async function portState(command: ServeCommand): Promise<"free" | "serve" | "other" | "unknown"> {
  if (command.port === 0 || !isLoopbackHost(command.host)) return "unknown";
  if (portIsFree(command.port)) return "free";
  try {
    const response = await fetch(`http://127.0.0.1:${command.port}${command.upstreams[0]!.path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      signal: AbortSignal.timeout(3_000),
    });
    const body = await response.json().catch(() => undefined) as
      | { error?: { message?: unknown } }
      | undefined;
    return String(body?.error?.message).includes("Mcp-Session-Id") ? "serve" : "other";
  } catch {
    return "other";
  }
}

/** Runs the checks of a `serve` command line and writes the report; the exit code. */
export async function doctorServe(command: ServeCommand, context: DoctorContext): Promise<number> {
  const report = new Report();
  const env = context.env ?? ((name: string) => Deno.env.get(name));
  for (const upstream of command.upstreams) {
    // The sandbox snippet of a stdio entry does not apply to an http entry (below).
    const checked = await examine(upstream.cli as DoctorCommand, {
      ...context,
      env: (name) => name === "SANDBOX_RUNTIME" ? undefined : env(name),
    });
    const label = upstream.name === undefined ? "" : `${upstream.name}: `;
    for (const finding of checked.report.findings) report.add(finding.mark, label + finding.text);
  }
  const entries = httpEntries(command);
  report.add("note", `mcp.json: ${JSON.stringify({ servers: entries })}`);
  switch (await portState(command)) {
    case "free":
      report.add("ok", `The port ${command.port} of ${command.host} is free.`);
      break;
    case "serve":
      report.add("note", `A serve already answers on the port ${command.port}.`);
      break;
    case "other":
      report.add(
        "break",
        `Another program listens on the port ${command.port}: give serve another --port.`,
      );
      break;
    default:
      if (command.port === 0) {
        report.add(
          "note",
          "--port 0 takes any free port, which changes at each start: give a fixed one for mcp.json.",
        );
      }
  }
  if (!isLoopbackHost(command.host)) {
    report.add(
      "note",
      `serve listens on ${command.host}: reachable from other hosts; each client sends the token of --token-env.`,
    );
  }
  // The command line itself is not shown: its arguments can hold a secret.
  report.add(
    "note",
    `Start it at login: ${
      Deno.build.os === "darwin" ? "a launchd agent" : "a systemd user unit"
    } that runs "mcp-bridge-vscode serve" with these options (README: "Start it at login").`,
  );
  report.add(
    "note",
    "VS Code's sandbox (sandboxEnabled) applies to stdio entries: an http entry starts nothing, " +
      "so serve runs outside it, with the rights of its user; its sign-in can open a browser.",
  );
  if (env("SANDBOX_RUNTIME") === "1") {
    report.add(
      "note",
      "SANDBOX_RUNTIME=1: serve itself runs in a sandbox here, so it signs in with stored tokens only (run login outside first), and the sandbox must allow it to bind its port (allowLocalBinding).",
    );
  }
  const write = context.write ?? ((text: string) => {
    Deno.stdout.writeSync(new TextEncoder().encode(text));
  });
  write(
    context.json
      ? `${
        JSON.stringify(
          { report: report.json(), snippet: null, serve: { mcpJson: { servers: entries } } },
          null,
          2,
        )
      }\n`
      : report.text(),
  );
  return report.breaks > 0 ? 1 : 0;
}
