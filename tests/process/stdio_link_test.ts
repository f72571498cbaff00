/**
 * The stdio link over the real program: an upstream that stops reading its
 * stdin, one that closes its stdout and runs on, and the death of the bridge.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, DENO, INITIALIZE_REQUEST, programArgs, ROOT } from "./helpers.ts";
import { waitFor, within } from "../wait.ts";

const STUBBORN = (...args: string[]) => [
  DENO,
  "run",
  "-A",
  `${ROOT}tests/fixtures/stubborn_server.ts`,
  ...args,
];
const linux = Deno.build.os === "linux";

/**
 * True while the process runs: not gone, not a zombie. `ps`, because Deno
 * reads /proc of another process only with all permissions.
 */
async function isRunning(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return out.success && state !== "" && !state.startsWith("Z");
}

/** A process that a test started and that may outlive the bridge: stopped at the end. */
function killLater(pid: number): { [Symbol.asyncDispose](): Promise<void> } {
  return {
    async [Symbol.asyncDispose]() {
      try {
        if (await isRunning(pid)) Deno.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    },
  };
}

async function upstreamPid(bridge: BridgeProcess, id: number): Promise<number> {
  await bridge.request(id, "tools/call", { name: "pid", arguments: {} });
  const response = await bridge.response(id);
  const pid = (response.result as { structuredContent: { pid: number } }).structuredContent.pid;
  strictEqual(typeof pid, "number");
  return pid;
}

const CLOSED = {
  code: -32603,
  message: "The upstream server process stopped. See the Output channel of the server.",
  data: { cause: "closed" },
};

Deno.test({
  name: "an upstream that stops reading and ignores SIGTERM: the end of the input still stops it",
  ignore: !linux,
  async fn() {
    await using bridge = new BridgeProcess([
      "--shutdown-grace",
      "0.3",
      "--stop-grace",
      "0.3",
      "--",
      ...STUBBORN("--ignore-term"),
    ]);
    await bridge.initialize();
    const pid = await upstreamPid(bridge, 2);
    await using _ = killLater(pid);
    await bridge.request(3, "tools/call", { name: "deafen", arguments: {} });
    await bridge.response(3);
    // 4 MiB of requests: far more than a pipe holds, so the bridge's writes to the child block.
    const filler = "x".repeat(256 * 1024);
    for (let id = 4; id < 20; id++) {
      await bridge.request(id, "tools/call", { name: "hang", arguments: { filler } });
    }
    // The requests stay in flight; the input ends.
    const started = Date.now();
    const code = await within(bridge.exit(), 10_000, "exit of the bridge");
    const took = Date.now() - started;
    strictEqual(code, 0, bridge.stderr);
    // stdin closed (0.3 s), SIGTERM ignored (0.3 s), SIGKILL: well under the 4 s of the defaults.
    strictEqual(took < 3000, true, `the exit took ${took} ms`);
    strictEqual(bridge.stderr.includes("stubborn: ignored SIGTERM"), true, bridge.stderr);
    strictEqual(await isRunning(pid), false, "the upstream still runs");
    deepStrictEqual(await bridge.rest(500), []);
  },
});

Deno.test({
  name: "an upstream that closes its stdout and runs on: closed for what is in flight and later",
  ignore: !linux,
  async fn() {
    await using bridge = new BridgeProcess(["--stop-grace", "0.3", "--", ...STUBBORN()]);
    await bridge.initialize();
    const pid = await upstreamPid(bridge, 2);
    await using _ = killLater(pid);
    await bridge.request(3, "tools/list");
    await bridge.request(4, "tools/call", { name: "close_stdout", arguments: {} });
    deepStrictEqual((await bridge.response(3, 5000)).error, CLOSED);
    deepStrictEqual((await bridge.response(4, 5000)).error, CLOSED);
    await bridge.request(5, "tools/call", { name: "pid", arguments: {} });
    deepStrictEqual((await bridge.response(5, 5000)).error, CLOSED);
    // The escalation stops the child (it runs on after its stdin closed: SIGTERM), while the
    // bridge still answers its client.
    await waitFor("stop of the upstream", async () => !(await isRunning(pid)), {
      timeoutMs: 3000,
      intervalMs: 20,
    });
    await bridge.request(6, "ping");
    deepStrictEqual((await bridge.response(6)).result, {});
    strictEqual(await bridge.exit(), 1);
    const lines = bridge.stderr.split("\n").filter((line) =>
      line.startsWith("[mcp-bridge-vscode]")
    );
    deepStrictEqual(lines, ["[mcp-bridge-vscode] error: the upstream connection closed"]);
  },
});

/** The bridge with its own `PATH`, which decides whether setpriv is found. */
function bridgeWithPath(path: string, upstream: string[]): Deno.ChildProcess {
  return new Deno.Command(DENO, {
    args: programArgs(["--", ...upstream]),
    cwd: ROOT,
    env: { PATH: path },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
}

/** initialize, then the pid of the upstream, over raw pipes; the input stays open. */
async function pidOver(
  child: Deno.ChildProcess,
): Promise<{ pid: number; stdin: WritableStreamDefaultWriter<Uint8Array> }> {
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  await send(INITIALIZE_REQUEST);
  let text = "";
  let asked = false;
  for await (const chunk of lines) {
    text += chunk;
    if (!asked && text.includes("\n")) {
      // The result of initialize: the state is ready.
      asked = true;
      await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "pid" } });
    }
    const line = text.split("\n").find((l) => l.includes('"id":2'));
    if (line) {
      await lines.return?.();
      const pid = JSON.parse(line).result?.structuredContent?.pid;
      if (typeof pid !== "number") throw new Error(`no pid: ${line}`);
      return { pid, stdin: writer };
    }
  }
  throw new Error("no pid");
}

Deno.test({
  name: "the death of the bridge (SIGKILL) stops the child within a second (setpriv --pdeathsig)",
  ignore: !linux,
  async fn() {
    const child = bridgeWithPath(Deno.env.get("PATH") ?? "/usr/bin:/bin", STUBBORN());
    const { pid, stdin } = await pidOver(child);
    await using _ = killLater(pid);
    strictEqual(await isRunning(pid), true);
    child.kill("SIGKILL");
    await child.status;
    await stdin.close().catch(() => {});
    await waitFor("stop of the child after the bridge died", async () => !(await isRunning(pid)), {
      timeoutMs: 1000,
      intervalMs: 20,
    });
  },
});

Deno.test({
  name: "without setpriv on the PATH the child starts directly (and outlives a SIGKILLed bridge)",
  ignore: !linux,
  async fn() {
    // The upstream command has its full path; only setpriv is missing.
    const child = bridgeWithPath("/nonexistent", STUBBORN());
    const { pid, stdin } = await pidOver(child);
    await using _ = killLater(pid);
    child.kill("SIGKILL");
    await child.status;
    await stdin.close().catch(() => {});
    // Nothing else stops it: the check above can fail (a death signal comes at once; 50 ms).
    await new Promise((r) => setTimeout(r, 50));
    strictEqual(await isRunning(pid), true);
  },
});
