/**
 * The pipes of `serve`'s shared upstream child, as a real program: a child
 * that closes its stdin and runs on. Each session on it fails its later
 * requests at once, the requests it has still get their answers, a new
 * session gets a new child, and the old one stops when its last session has
 * left.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, ROOT } from "./helpers.ts";
import { waitFor, within } from "../wait.ts";
import { alive, connectHttp, disconnect, failure, ServeProcess } from "./serve_helpers.ts";

const STUBBORN = [DENO, "run", "-A", `${ROOT}tests/fixtures/stubborn_server.ts`];
const linux = Deno.build.os === "linux";

/** The code and the cause of a request that failed (it must fail). */

/** A process that may outlive the test: killed at the end. */
function killLater(pid: number): { [Symbol.dispose](): void } {
  return {
    [Symbol.dispose]() {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    },
  };
}

const pidOf = (result: unknown) =>
  (result as { structuredContent: { pid: number } })
    .structuredContent.pid;
const structured = (result: unknown) =>
  (result as { structuredContent: unknown }).structuredContent;

Deno.test({
  name:
    "serve: the shared child closes its stdin and runs on: every session's later requests fail at once, the earlier ones get their answers, a new session gets a new child, the old one stops after its last session",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir();
    const release = `${dir}/release`;
    try {
      await using serve = await ServeProcess.start(["--stop-grace", "0.3", "--", ...STUBBORN]);
      const a = await connectHttp(serve.url(), {}, "a");
      const b = await connectHttp(serve.url(), {}, "b");
      const firstPid = pidOf(await a.client.callTool({ name: "pid", arguments: {} }));
      using _first = killLater(firstPid);
      strictEqual(pidOf(await b.client.callTool({ name: "pid", arguments: {} })), firstPid);
      // 4 calls of each session before the close: written, unanswered until the release.
      const held = [a, b].flatMap((s) =>
        [1, 2, 3, 4].map(() => s.client.callTool({ name: "held", arguments: {} }))
      );
      // The child read them all before the close.
      await waitFor(
        "the held calls",
        () => serve.stderr.split("stubborn: holds a call").length === 9,
      );
      const closed = await a.client.callTool({ name: "close_stdin", arguments: { release } });
      deepStrictEqual(structured(closed), { closed: true });
      // Later requests of both sessions: none can be written, each fails at once.
      const started = Date.now();
      const later = await within(
        Promise.all([a, b].flatMap((s) => [
          failure(s.client.callTool({ name: "pid", arguments: {} })),
          failure(s.client.listTools()),
          failure(s.client.callTool({ name: "pid", arguments: {} })),
        ])),
        5_000,
        "the later requests",
      );
      const took = Date.now() - started;
      for (const got of later) deepStrictEqual(got, { code: -32603, cause: "closed" });
      ok(took < 1_000, `the later requests took ${took} ms`);
      // A new session gets a new child; the old one still runs for what it has.
      const c = await connectHttp(serve.url(), {}, "c");
      const secondPid = pidOf(await c.client.callTool({ name: "pid", arguments: {} }));
      using _second = killLater(secondPid);
      ok(secondPid !== firstPid, `${firstPid} ${secondPid}`);
      ok(alive(firstPid), "the old child stopped before its sessions left");
      // The server still answers what it got, each call once.
      await Deno.writeTextFile(release, "");
      for (const result of await within(Promise.all(held), 5_000, "the held calls")) {
        deepStrictEqual(structured(result), { held: true });
      }
      await a.client.ping();
      await disconnect(a);
      await disconnect(b);
      // Its last session left: the old child stops (not after --upstream-grace, 30 s).
      await waitFor("the stop of the old child", () => !alive(firstPid), { timeoutMs: 5_000 });
      strictEqual(pidOf(await c.client.callTool({ name: "pid", arguments: {} })), secondPid);
      await disconnect(c);
      strictEqual(await serve.stop(), 0);
      const lines = serve.stderr.split("\n");
      strictEqual(
        lines.filter((line) => line.includes("info: the upstream server closed its stdin")).length,
        1,
        serve.stderr,
      );
      strictEqual(lines.filter((line) => line.includes("the upstream server started")).length, 2);
      // Each session on it knew at once: its later requests were never sent.
      for (const label of ["#1", "#2"]) {
        ok(
          lines.includes(
            `[mcp-bridge-vscode] error: session ${label}: the upstream server closed its stdin: ` +
              "each later request fails; the requests that it has wait for their answers",
          ),
          serve.stderr,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
