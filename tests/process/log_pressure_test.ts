/**
 * The log of the real program when its client does not read its stderr: the
 * bridge goes on (a blocking write would hold it, ping included), drops and
 * counts the lines that do not fit, says how many once stderr is read, and
 * exits in time even when stderr is never read.
 */

import { ok, strictEqual } from "node:assert/strict";
import {
  bridgeEnv,
  DENO,
  INITIALIZE_REQUEST,
  LineSplitter,
  MODERN_SERVER,
  programArgs,
  ROOT,
} from "./helpers.ts";
import { within } from "../wait.ts";

const enc = new TextEncoder();
const TAG = "[mcp-bridge-vscode]";
/** Each gives one debug line of about 70 bytes: 2.8 MB, far more than a pipe and the queue. */
const NOTIFICATIONS = 40_000;

/** The bridge with its stderr piped and not read (until a test reads it), and its stdout read. */
class UnreadStderrBridge implements AsyncDisposable {
  readonly child = new Deno.Command(DENO, {
    args: programArgs(["--log-level", "debug", "--", ...MODERN_SERVER]),
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: bridgeEnv(),
    clearEnv: true,
  }).spawn();
  readonly input = this.child.stdin.getWriter();
  readonly #lines = this.child.stdout.pipeThrough(new TextDecoderStream())
    .pipeThrough(new LineSplitter()).values();

  send(message: unknown): Promise<void> {
    return this.input.write(enc.encode(JSON.stringify(message) + "\n"));
  }

  /** The next message of the bridge (a hang guard of 10 s). */
  async next(): Promise<Record<string, unknown>> {
    const line = await within(this.#lines.next(), 10_000, "a message of the bridge");
    if (line.done) throw new Error("the bridge closed its stdout");
    return JSON.parse(line.value);
  }

  /** initialize, the flood of notifications that each log a debug line, then a ping. */
  async flood(): Promise<void> {
    await this.send(INITIALIZE_REQUEST);
    strictEqual((await this.next()).id, 1);
    const note = JSON.stringify({ jsonrpc: "2.0", method: "notifications/flood" }) + "\n";
    // A bridge that blocks on its stderr stops reading its input too.
    await within(
      this.input.write(enc.encode(note.repeat(NOTIFICATIONS))),
      10_000,
      "read of the input by the bridge",
    );
    // The bridge still answers at once: its log lines wait or are dropped.
    await this.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    strictEqual((await this.next()).id, 2);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#lines.return?.();
    try {
      this.child.kill("SIGKILL");
    } catch {
      // ended
    }
    await this.child.status;
    if (!this.child.stderr.locked) await this.child.stderr.cancel();
  }
}

Deno.test("a client that does not read stderr: the bridge answers, drops and counts log lines, and reports them once stderr is read", async () => {
  await using bridge = new UnreadStderrBridge();
  await bridge.flood();
  // Now the client reads stderr.
  const stderr = new Response(bridge.child.stderr).text();
  await bridge.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  strictEqual((await bridge.next()).id, 3);
  await bridge.send({ jsonrpc: "2.0", method: "notifications/last" });
  await bridge.input.close();
  strictEqual((await within(bridge.child.status, 15_000, "the exit")).code, 0);
  const lines = (await stderr).split("\n").filter((line) => line.includes(TAG));
  // Each line of the bridge is whole: it starts with the tag.
  ok(lines.every((line) => line.startsWith(`${TAG} `)), lines.find((l) => !l.startsWith(TAG)));
  const written =
    lines.filter((line) => line.endsWith("ignored the notification notifications/flood")).length;
  const notes = lines.flatMap((line) => {
    const match = /^\[mcp-bridge-vscode\] warn: (\d+) log lines were dropped: stderr was full$/
      .exec(line);
    return match ? [Number(match[1])] : [];
  });
  ok(notes.length > 0, "no line says how many were dropped");
  // Every event is a line, or counted in a line that says so.
  strictEqual(written + notes.reduce((a, b) => a + b, 0), NOTIFICATIONS);
  // The last line reached stderr before the exit.
  ok(lines.at(-1)?.endsWith("ignored the notification notifications/last"), lines.at(-1));
});

Deno.test("a stderr that is never read: the bridge still exits at the end of its input, in time", async () => {
  await using bridge = new UnreadStderrBridge();
  await bridge.flood();
  await bridge.input.close();
  // The flush of the log waits 2 s at most for a stderr that nobody reads.
  strictEqual((await within(bridge.child.status, 15_000, "the exit")).code, 0);
});
