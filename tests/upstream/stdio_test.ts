/**
 * The stdio link and the upstream client on it, with real child processes
 * (`sh`) and small limits: the escalation of the stop, the ends of the link,
 * the start through the death-signal wrapper.
 */

import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { UpstreamClient } from "../../lib/upstream/client.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { LinkEnd, UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { spawnStdioLink, type StdioLinkOptions } from "../../lib/upstream/stdio.ts";
import { waitFor, within } from "../wait.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

function link(script: string, extra: Partial<StdioLinkOptions> = {}): Promise<UpstreamLink> {
  return spawnStdioLink({
    command: "sh",
    args: ["-c", script],
    maxLineBytes: 1 << 20,
    stopGraceMs: 200,
    ...extra,
  });
}

/** Stops a process that a script started in the background (its pid came in a frame). */
function stop(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** The link, with each frame shown to `seen` first. */
function tap(l: UpstreamLink, seen: (frame: UpstreamFrame) => void): UpstreamLink {
  return {
    isRemote: l.isRemote,
    ended: l.ended,
    ...(l.sendEnded && { sendEnded: l.sendEnded }),
    send: (message) => l.send(message),
    close: () => l.close(),
    read: (onFrame) =>
      l.read((frame) => {
        seen(frame);
        return onFrame(frame);
      }),
  };
}

const CLIENT = { clientInfo: { name: "t", version: "1" }, capabilities: {}, endGraceMs: 100 };

Deno.test({
  name: "close: a child that neither reads its stdin nor stops at SIGTERM gets SIGKILL in time",
  ignore: !posix,
  async fn() {
    // `sleep` never reads stdin; the shell ignores SIGTERM.
    const l = await link("trap '' TERM; echo ready; exec sleep 30");
    const frames: UpstreamFrame[] = [];
    const reading = l.read((frame) => void frames.push(frame));
    await waitFor("the first line", () => frames.length === 1);
    // Fill the pipe: these writes never complete.
    const big = { jsonrpc: "2.0" as const, method: "x", params: { pad: "y".repeat(256 * 1024) } };
    for (let i = 0; i < 8; i++) l.send(big).catch(() => {});
    const started = Date.now();
    await within(l.close(), 3000, "close of the link");
    const took = Date.now() - started;
    // stdin (200 ms), SIGTERM (200 ms), SIGKILL.
    strictEqual(took >= 350 && took < 2000, true, `${took} ms`);
    deepStrictEqual(await l.ended, { kind: "exited", code: null });
    await within(reading, 2000, "end of the read");
  },
});

Deno.test({
  name: "close: a child that stops at the end of its stdin needs no signal",
  ignore: !posix,
  async fn() {
    const l = await link("cat > /dev/null; exit 7", { stopGraceMs: 5000 });
    const reading = l.read(() => {});
    const started = Date.now();
    await l.close();
    strictEqual(Date.now() - started < 2000, true);
    deepStrictEqual(await l.ended, { kind: "exited", code: 7 });
    await reading;
    // After close, a send is refused with closed.
    const refused = await l.send({ jsonrpc: "2.0", method: "x" }).catch((e) => e);
    strictEqual(refused instanceof UpstreamFailure && refused.kind, "closed");
  },
});

Deno.test({
  name: "a child that exits while a process it started keeps its stdout: the read still ends",
  ignore: !posix,
  async fn() {
    // The background sleep inherits stdout and holds the pipe open for 30 s.
    const l = await link(`sleep 30 & echo "{\\"pid\\":$!}"; exit 3`);
    let pid: number | undefined;
    try {
      const reading = l.read((frame) => {
        if (frame.kind === "message") pid = frame.value.pid as number;
      });
      deepStrictEqual(await l.ended, { kind: "exited", code: 3 });
      await within(reading, 2000, "end of the read");
      strictEqual(typeof pid, "number");
    } finally {
      stop(pid);
    }
  },
});

Deno.test({
  name: "a child that exits: what it wrote is read in full, also while the reader is held",
  ignore: !posix,
  async fn() {
    // A quiet time of 20 ms instead of 250 ms: the hold below is longer than it.
    const l = await link('for i in 1 2 3 4 5; do echo "{\\"n\\":$i}"; done; exit 0', {
      exitQuietMs: 20,
    });
    const seen: unknown[] = [];
    await l.read((frame) => {
      if (frame.kind === "message") seen.push(frame.value.n);
      // Back pressure: the first frame holds the reader longer than the quiet time
      // (past the child's exit too, which the link reports first).
      if (seen.length === 1) {
        return l.ended.then(() => new Promise((r) => setTimeout(r, 50)));
      }
    });
    deepStrictEqual(seen, [1, 2, 3, 4, 5]);
  },
});

Deno.test({
  name: "the client: a child that closes its stdout and runs on is a closed link, then stopped",
  ignore: !posix,
  async fn() {
    const l = await link("exec 1>&-; exec sleep 30");
    const client = new UpstreamClient(l, CLIENT);
    const failure = await client.request("tools/list", {}, { timeoutMs: 5000 }).catch((e) => e);
    strictEqual(failure instanceof UpstreamFailure && failure.kind, "closed");
    deepStrictEqual(await client.done, { kind: "closed" } satisfies LinkEnd);
    // The client closed the link: stdin (200 ms), then SIGTERM stops the sleep.
    deepStrictEqual(await within(l.ended, 3000, "end of the child"), {
      kind: "exited",
      code: null,
    });
    const later = await client.request("tools/list", {}, { timeoutMs: 5000 }).catch((e) => e);
    strictEqual(later instanceof UpstreamFailure && later.kind, "closed");
    await client.close();
  },
});

Deno.test({
  name: "the client: a child that exits is exited for what is in flight, also with a grandchild",
  ignore: !posix,
  async fn() {
    let pid: number | undefined;
    const l = tap(await link(`sleep 30 & echo "{\\"pid\\":$!}"; read line; exit 4`), (frame) => {
      if (frame.kind === "message") pid = frame.value.pid as number;
    });
    const client = new UpstreamClient(l, CLIENT);
    try {
      const failure = await within(
        client.request("tools/list", {}, { timeoutMs: 5000 }).catch((e) => e),
        3000,
        "failure of the request",
      );
      strictEqual(failure instanceof UpstreamFailure && failure.kind, "exited");
      deepStrictEqual(await client.done, { kind: "exited", code: 4 });
    } finally {
      stop(pid);
      await client.close();
    }
  },
});

Deno.test({
  name: "a flood of pings from a child that does not read its stdin pauses the read of its stdout",
  ignore: !posix,
  async fn() {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    // 300,000 pings (about 11 MB of answers); the shell reads none of the answers.
    const l = await link(`yes '${ping}' | head -n 300000; exec sleep 30`);
    let frames = 0;
    const client = new UpstreamClient(
      tap(l, () => void frames++),
      CLIENT,
    );
    // The answers wait for the child: the reader stops at about the writer's high water.
    let last = -1;
    // A pause: no frame in three polls 50 ms apart.
    let still = 0;
    await waitFor("a pause of the read", () => {
      still = frames === last ? still + 1 : 0;
      last = frames;
      return still >= 3;
    }, { timeoutMs: 5000, intervalMs: 50 });
    strictEqual(frames > 1000 && frames < 100_000, true, `${frames} frames read`);
    await within(client.close(), 3000, "close of the client");
  },
});

Deno.test({
  name: "a flood of the child's output leaves the timers their turns",
  ignore: !posix,
  async fn() {
    const note = '{"jsonrpc":"2.0","method":"notifications/x","params":{}}';
    const l = await link(`yes '${note}' | head -n 500000`);
    let frames = 0;
    let worst = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      const now = Date.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    try {
      await l.read(() => void frames++);
    } finally {
      clearInterval(timer);
    }
    strictEqual(frames, 500_000);
    // Without a turn of the event loop every few ms, this gap was about a second.
    strictEqual(worst < 400, true, `a 10 ms timer waited ${worst} ms`);
    await l.close();
  },
});

Deno.test({
  name: "close ends the read also while the sink holds it for ever (a client that stopped reading)",
  ignore: !posix,
  async fn() {
    const l = await link('echo "{}"; echo "{}"; exec sleep 30');
    let frames = 0;
    const reading = l.read(() => {
      frames++;
      return new Promise<void>(() => {}); // never settles
    });
    await waitFor("the first line", () => frames === 1);
    await within(l.close(), 3000, "close of the link");
    await within(reading, 1000, "end of the read");
    strictEqual(frames, 1);
  },
});

Deno.test({
  name:
    "messages above the high water wait for the child in the writer's queue, in their order, and none is lost",
  ignore: !posix,
  async fn() {
    // The child reads nothing for 300 ms, then echoes its stdin.
    const l = await link("sleep 0.3; exec cat", { stopGraceMs: 2000 });
    const seen: number[] = [];
    const reading = l.read((frame) => {
      if (frame.kind === "message") seen.push((frame.value.params as { n: number }).n);
    });
    const pad = "p".repeat(1024);
    const sends = [];
    for (let n = 0; n < 4000; n++) {
      sends.push(l.send({ jsonrpc: "2.0", method: "x", params: { n, pad } }));
    }
    await within(Promise.all(sends), 5000, "the sends");
    await waitFor("the echo of every message", () => seen.length === 4000);
    deepStrictEqual(seen, Array.from({ length: 4000 }, (_, n) => n));
    await l.close();
    await reading;
  },
});

Deno.test({
  name:
    "start: a missing or not executable command is spawn_failed, through the wrapper and without it",
  ignore: !linux,
  async fn() {
    const missing = { command: "no-such-command-x9", args: [], maxLineBytes: 1024 };
    // Through setpriv: it starts, then exits 127 before any output.
    const wrapped = await spawnStdioLink({ ...missing, stopGraceMs: 200 });
    wrapped.read(() => {});
    const end = await wrapped.ended;
    strictEqual(end.kind === "failed" && end.failure?.kind, "spawn_failed");
    await wrapped.close();
    // Without a wrapper: the spawn itself fails.
    const direct = await spawnStdioLink({ ...missing, stopGraceMs: 200, deathSignalWrapper: null })
      .catch((e) => e);
    strictEqual(direct instanceof UpstreamFailure && direct.kind, "spawn_failed");
    // A file that is not executable: 126 through setpriv, a refused spawn without it.
    const file = await Deno.makeTempFile();
    try {
      const notExecutable = { command: file, args: [], maxLineBytes: 1024, stopGraceMs: 200 };
      const viaWrapper = await spawnStdioLink(notExecutable);
      viaWrapper.read(() => {});
      const refused = await viaWrapper.ended;
      strictEqual(refused.kind === "failed" && refused.failure?.kind, "spawn_failed");
      await viaWrapper.close();
      const plain = await spawnStdioLink({ ...notExecutable, deathSignalWrapper: null })
        .catch((e) => e);
      strictEqual(plain instanceof UpstreamFailure && plain.kind, "spawn_failed");
    } finally {
      await Deno.remove(file);
    }
    // A wrapper that is not on the PATH: the command starts directly.
    const unwrapped = await spawnStdioLink({
      command: "sh",
      args: ["-c", "exit 127"],
      maxLineBytes: 1024,
      stopGraceMs: 200,
      deathSignalWrapper: ["no-such-wrapper-x9", "--"],
    });
    unwrapped.read(() => {});
    // Not wrapped: 127 is the command's own exit code.
    deepStrictEqual(await unwrapped.ended, { kind: "exited", code: 127 });
    await unwrapped.close();
  },
});

Deno.test({
  name: "start: a command that exits 127 after its output is exited, not spawn_failed",
  ignore: !linux,
  async fn() {
    const l = await link('echo "{}"; exit 127');
    await l.read(() => {});
    deepStrictEqual(await l.ended, { kind: "exited", code: 127 });
    await l.close();
  },
});

Deno.test({
  name:
    "a child that closes its stdin and runs on: later requests fail at once with closed, earlier ones get their answers",
  ignore: !posix,
  async fn() {
    const release = await Deno.makeTempDir();
    const go = `${release}/go`;
    // Reads 8 requests, closes its stdin, says so, and answers them only once the test lets it.
    const l = await link(
      `i=0; while [ $i -lt 8 ]; do read line; i=$((i+1)); done; exec 0<&-; ` +
        `echo '{"jsonrpc":"2.0","method":"notifications/closed"}'; ` +
        `while [ ! -e ${go} ]; do sleep 0.02; done; ` +
        `for n in 1 2 3 4 5 6 7 8; do echo "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":$n,\\"result\\":{\\"n\\":$n}}"; done; ` +
        `exec sleep 30`,
    );
    let closed = false;
    const client = new UpstreamClient(
      tap(l, (frame) => {
        if (frame.kind === "message" && frame.value.method === "notifications/closed") {
          closed = true;
        }
      }),
      CLIENT,
    );
    try {
      const before = Array.from(
        { length: 8 },
        () => client.request("tools/call", {}, { timeoutMs: 60_000 }).catch((e) => e),
      );
      await waitFor("the close of the child's stdin", () => closed);
      strictEqual(client.cannotSend, false);
      const after = await within(
        Promise.all(Array.from(
          { length: 9 },
          () => client.request("tools/call", {}, { timeoutMs: 60_000 }).catch((e) => e),
        )),
        1000,
        "the failures of the requests after the close (a hang guard)",
      );
      deepStrictEqual(after.map((e) => e instanceof UpstreamFailure && e.kind), [
        ...Array(9).fill("closed"),
      ]);
      strictEqual(client.cannotSend, true);
      strictEqual((await within(l.sendEnded!, 100, "sendEnded")).kind, "closed");
      // The requests that went out before still get their answers.
      await Deno.writeTextFile(go, "");
      deepStrictEqual(await within(Promise.all(before), 5000, "the earlier answers"), [
        ...Array.from({ length: 8 }, (_, i) => ({ n: i + 1 })),
      ]);
      strictEqual(client.end, undefined);
    } finally {
      await client.close();
      await Deno.remove(release, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a child that does not read its stdin: above the backlog bound a request fails at once, a notification still queues",
  ignore: !posix,
  async fn() {
    const warnings: string[] = [];
    // The child reads nothing for 300 ms, then all of its stdin.
    const l = await link("sleep 0.3; exec cat > /dev/null", {
      maxBacklogBytes: 256 * 1024,
      warn: (message) => void warnings.push(message),
      stopGraceMs: 2000,
    });
    const pad = "p".repeat(100 * 1024);
    const request = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "x", params: { pad } });
    // Sent in one task: 0, 100 and 200 KiB wait before the first three; 300 KiB before the fourth.
    const sends = [0, 1, 2, 3, 4].map((id) =>
      l.send(request(id)).then(() => "written", (e: unknown) => e)
    );
    // A notification is queued, never refused (nobody waits for its write).
    await within(
      l.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { pad } }),
      100,
      "the queue of the notification",
    );
    const refused = await within(Promise.all(sends.slice(3)), 1000, "the refusals");
    for (const failure of refused) {
      ok(failure instanceof UpstreamFailure, String(failure));
      strictEqual(failure.kind, "transport_failed");
      strictEqual(
        failure.detail,
        "the upstream server does not read its stdin, limit: 262144 bytes",
      );
    }
    strictEqual(warnings.length, 1);
    match(
      warnings[0]!,
      /^the upstream server does not read its stdin: 30\d{4} bytes wait for it, each request fails until it reads \(limit: 262144 bytes\)$/,
    );
    // The child reads: what was queued goes out, and the next request too.
    deepStrictEqual(await within(Promise.all(sends.slice(0, 3)), 5000, "the first writes"), [
      "written",
      "written",
      "written",
    ]);
    await within(l.send(request(99)), 5000, "a later request");
    deepStrictEqual(warnings.slice(1), [
      "the upstream server reads its stdin again: requests go out again",
    ]);
    await l.close();
  },
});

Deno.test({
  name:
    "a write after the child stopped fails with the cause of its end: spawn_failed for a command that did not start",
  ignore: !linux,
  async fn() {
    // Through setpriv: it starts, then exits 127 before any output.
    const l = await spawnStdioLink({
      command: "no-such-command-x9",
      args: [],
      maxLineBytes: 1024,
      stopGraceMs: 200,
    });
    const reading = l.read(() => {});
    const end = await l.ended;
    strictEqual(end.kind === "failed" && end.failure?.kind, "spawn_failed");
    const refused = await l.send({ jsonrpc: "2.0", id: 1, method: "server/discover" }).catch((e) =>
      e
    );
    strictEqual(refused instanceof UpstreamFailure && refused.kind, "spawn_failed");
    await l.close();
    await reading;
  },
});
