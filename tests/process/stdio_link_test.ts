/**
 * The stdio link over the real program: an upstream that stops reading its
 * stdin, one that closes its stdout or its stdin and runs on, a server behind
 * a shell (what the command started), and the death of the bridge.
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
    // The loss, and the one line of each request that failed.
    deepStrictEqual(lines.sort(), [
      "[mcp-bridge-vscode] error: the upstream connection closed",
      "[mcp-bridge-vscode] warn: tools/call (request 4) failed: closed",
      "[mcp-bridge-vscode] warn: tools/call (request 5) failed: closed",
      "[mcp-bridge-vscode] warn: tools/list (request 3) failed: closed",
    ]);
  },
});

Deno.test({
  name:
    "an upstream that closes its stdin and runs on: each later request fails at once with closed, the earlier ones get their answers",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir();
    const release = `${dir}/release`;
    try {
      await using bridge = new BridgeProcess(["--stop-grace", "0.3", "--", ...STUBBORN()]);
      await bridge.initialize();
      const pid = await upstreamPid(bridge, 2);
      await using _ = killLater(pid);
      // 8 calls before the close: written, unanswered.
      for (let id = 3; id <= 10; id++) {
        await bridge.request(id, "tools/call", { name: "held", arguments: {} });
      }
      await bridge.request(11, "tools/call", { name: "close_stdin", arguments: { release } });
      const closed = (await bridge.response(11)).result as { structuredContent: unknown };
      deepStrictEqual(closed.structuredContent, { closed: true });
      // 9 calls after it: none can be written; each fails at once (1 s: a hang guard).
      for (let id = 12; id <= 20; id++) {
        await bridge.request(id, id % 2 ? "tools/list" : "tools/call", { name: "pid" });
      }
      for (let id = 12; id <= 20; id++) {
        deepStrictEqual((await bridge.response(id, 1000)).error, CLOSED);
      }
      // The server still answers what it got.
      await Deno.writeTextFile(release, "");
      for (let id = 3; id <= 10; id++) {
        const held = (await bridge.response(id, 5000)).result as { structuredContent: unknown };
        deepStrictEqual(held.structuredContent, { held: true });
      }
      await bridge.request(21, "ping");
      deepStrictEqual((await bridge.response(21)).result, {});
      strictEqual(await bridge.exit(), 1);
      deepStrictEqual(bridge.queued, []);
      const lines = bridge.stderr.split("\n").filter((line) =>
        line.startsWith("[mcp-bridge-vscode]")
      );
      // One line for the close, and the failure line of each request that it failed.
      const failures = [];
      for (let id = 12; id <= 20; id++) {
        failures.push(
          `[mcp-bridge-vscode] warn: ${id % 2 ? "tools/list" : "tools/call"} (request ${id}) ` +
            "failed: closed",
        );
      }
      deepStrictEqual(
        lines.toSorted(),
        [
          "[mcp-bridge-vscode] error: the upstream server closed its stdin: each later request " +
          "fails; the requests that it has wait for their answers",
          ...failures,
        ].toSorted(),
      );
      strictEqual(await isRunning(pid), false, "the upstream still runs");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** The stubborn server behind a shell that waits for it: `sh -c "deno ... stubborn.ts; true"`. */
const BEHIND_SHELL = (...args: string[]) => [
  "sh",
  "-c",
  `"${DENO}" run -A "${ROOT}tests/fixtures/stubborn_server.ts" ${args.join(" ")}; true`,
];

for (const ignoreTerm of [false, true]) {
  Deno.test({
    name: `behind sh -c "...; true", a server that ignores the end of its stdin${
      ignoreTerm ? " and SIGTERM" : ""
    } stops with the bridge (the processes that the command started)`,
    ignore: Deno.build.os === "windows",
    async fn() {
      await using bridge = new BridgeProcess([
        "--shutdown-grace",
        "0.2",
        "--stop-grace",
        "0.3",
        "--",
        ...BEHIND_SHELL(...(ignoreTerm ? ["--ignore-term"] : [])),
      ]);
      await bridge.initialize();
      // The server's own pid: a grandchild of the bridge.
      const pid = await upstreamPid(bridge, 2);
      await using _ = killLater(pid);
      strictEqual(await isRunning(pid), true);
      strictEqual(await within(bridge.exit(), 10_000, "exit of the bridge"), 0, bridge.stderr);
      // The shell got SIGTERM with it; a server that ignores SIGTERM got SIGKILL after the grace.
      strictEqual(await isRunning(pid), false, "the server behind the shell still runs");
      strictEqual(bridge.stderr.includes("stubborn: ignored SIGTERM"), ignoreTerm, bridge.stderr);
    },
  });
}

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
