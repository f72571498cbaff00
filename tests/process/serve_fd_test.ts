/**
 * `serve` out of file descriptors (issue 39): a flood of connections that
 * each send half a request line, under `ulimit -n 128`, does not kill it; the
 * accept error is logged once, it listens again on the same port, and the
 * sessions (the one opened before the flood too) go on.
 */

import { ok, strictEqual } from "node:assert/strict";
import { waitFor } from "../wait.ts";
import { CONFORMANCE_UPSTREAM, connectHttp, disconnect, ServeProcess } from "./serve_helpers.ts";

const FD_LIMIT = 128;
const FLOOD = 200;
const HALF_REQUEST = new TextEncoder().encode("GET /mcp HTTP/1.1\r\n");

/** Whether the process exits within `ms`. */
async function exitsWithin(child: Deno.ChildProcess, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    child.status.then(() => true),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms)),
  ]);
  clearTimeout(timer);
  return exited;
}

Deno.test("out of descriptors: serve lives on, listens again, and its sessions answer", async () => {
  await using serve = await ServeProcess.start(
    ["--", ...CONFORMANCE_UPSTREAM],
    undefined,
    FD_LIMIT,
  );
  const before = await connectHttp(serve.url());
  const conns: Deno.Conn[] = [];
  try {
    for (let i = 0; i < FLOOD; i++) {
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: serve.port });
        conns.push(conn);
        await conn.write(HALF_REQUEST);
      } catch {
        // refused or reset: the server is out of descriptors (or not listening for a moment)
      }
    }
    ok(conns.length > FD_LIMIT / 2, `only ${conns.length} connections were opened`);
    strictEqual(await exitsWithin(serve.child, 1_000), false, `serve died:\n${serve.stderr}`);
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed by the server already
      }
    }
  }
  await waitFor(
    "the warning about descriptors",
    () => /out of file descriptors/.test(serve.stderr),
  );
  const after = await waitFor(
    "a new session",
    () => connectHttp(serve.url()).catch(() => undefined),
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  await after.client.ping();
  await before.client.ping();
  strictEqual(serve.stderr.match(/out of file descriptors/g)?.length, 1, serve.stderr);
  await disconnect(after);
  await disconnect(before);
  strictEqual(await serve.stop(), 0, serve.stderr);
  ok(!/Uncaught/.test(serve.stderr), serve.stderr);
});
