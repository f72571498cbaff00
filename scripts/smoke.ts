/**
 * The smoke test of a build of the bridge: `--version`, then a session in
 * front of the demo server (scripts/demo_server.ts, revision 2026-07-28):
 * initialize of revision 2025-11-25 as VS Code sends it, and a tools/call.
 * The release workflow runs it on each binary, on a runner of the binary's
 * own OS; the tests run it on the bundle that the binary embeds, as the
 * binary runs it (`tests/process/program.ts`), and on `deno run -q -P main.ts`.
 *
 * Run: `deno run -P=test scripts/smoke.ts BRIDGE [ARG...]`, for example
 * `deno run -P=test scripts/smoke.ts dist/mcp-bridge-vscode-x86_64-unknown-linux-gnu`
 *
 * @module
 */

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The time limit of the whole smoke test. */
const LIMIT_MS = 60_000;

/** The demo server, run by the Deno that runs this script. */
export const DEMO_SERVER: readonly string[] = [
  Deno.execPath(),
  "run",
  "-q",
  `${root}scripts/demo_server.ts`,
];

/** Reads lines of a byte stream. */
async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream) {
    buffer += dec.decode(chunk, { stream: true });
    let at: number;
    while ((at = buffer.indexOf("\n")) !== -1) {
      yield buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
    }
  }
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

/**
 * Runs the smoke test of `bridge` (the command and its first arguments);
 * resolves with the lines it reports, rejects with the first failure.
 */
export async function smoke(bridge: readonly string[]): Promise<string[]> {
  const [given, ...base] = bridge;
  if (given === undefined) throw new Error("give the bridge command");
  // A file (dist/... of the workflow) by its absolute path: Windows resolves no relative path.
  const command = existsSync(given) ? resolve(given) : given;
  const report: string[] = [];
  const version = await new Deno.Command(command, {
    args: [...base, "--version"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const versionText = dec.decode(version.stdout).trim();
  check(
    version.success && /^mcp-bridge-vscode \d+\.\d+\.\d+/.test(versionText),
    `--version: ${versionText}`,
  );
  report.push(`ok ${versionText}`);

  const child = new Deno.Command(command, {
    args: [...base, "--", ...DEMO_SERVER],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const stderrText = (async () => {
    let text = "";
    for (;;) {
      const { value, done } = await stderr.read();
      if (done) return text;
      text += value;
    }
  })();
  const writer = child.stdin.getWriter();
  const lines = linesOf(child.stdout);
  const send = (message: unknown) => writer.write(enc.encode(JSON.stringify(message) + "\n"));
  const response = async (id: number) => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error(`no response ${id}: the bridge closed stdout`);
      const message = JSON.parse(value);
      if (message.id === id) return message;
    }
  };
  const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { roots: { listChanged: true } },
        clientInfo: { name: "smoke", version: "1" },
      },
    });
    const init = await response(1);
    check(init.result?.protocolVersion === "2025-11-25", `initialize: ${JSON.stringify(init)}`);
    check(init.result?.serverInfo?.name === "demo-2026", `serverInfo: ${JSON.stringify(init)}`);
    report.push("ok initialize: 2025-11-25, server demo-2026");
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "smoke test" } },
    });
    const call = await response(2);
    check(
      call.result?.content?.[0]?.text === "smoke test",
      `tools/call: ${JSON.stringify(call)}`,
    );
    report.push("ok tools/call echo");
    await writer.close();
    const status = await child.status;
    check(status.code === 0, `exit code ${status.code} after the end of the input`);
    report.push("ok exit 0 at the end of the input");
    return report;
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // stopped
    }
    await child.status;
    const text = await stderrText;
    throw new Error(`${(error as Error).message}\n--- stderr of the bridge ---\n${text}`);
  } finally {
    clearTimeout(timer);
    await stderrText;
  }
}

if (import.meta.main) {
  try {
    for (const line of await smoke(Deno.args)) Deno.stdout.writeSync(enc.encode(line + "\n"));
  } catch (error) {
    Deno.stderr.writeSync(enc.encode(`smoke test failed: ${(error as Error).message}\n`));
    Deno.exit(1);
  }
}
