/**
 * One session of `serve` on its own: a message that comes after the session
 * ended (a DELETE or the idle limit while the message waited) gets 404, not
 * a stream that never ends; the back pressure of a client that does not read
 * its streams holds its requests only, and a bounded number of them.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ServeSession } from "../../lib/serve/session.ts";
import { readClientFrame } from "../../lib/frontend/inbound.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { server } from "../fixtures/conformance_upstream.ts";
import { within } from "../wait.ts";
import { FaceHarness, messagesOf, PORT } from "./face_harness.ts";

const PING = { jsonrpc: "2.0", id: 1, method: "ping" };

Deno.test("serve session: a message after the end of the session gets 404", async () => {
  let ended = 0;
  const session = new ServeSession({
    id: "s",
    label: "#1",
    settings: {
      profile: VSCODE_PROFILE,
      limits: { ...DEFAULT_LIMITS, shutdown_grace_ms: 100 },
      log: SILENT_LOGGER,
      fallback: { name: "t", version: "1" },
      connect: () => connectMemoryLink(server),
    },
    idleMs: 60_000,
    onEnd: () => void ended++,
  });
  const ping = readClientFrame(
    { kind: "line", bytes: new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}') },
    DEFAULT_LIMITS,
    "b-",
  );
  strictEqual((await session.post(ping)).status, 200);
  await session.end();
  strictEqual(ended, 1);
  const late = await session.post(ping);
  strictEqual(late.status, 404);
  await late.body?.cancel();
});

Deno.test("serve session: while a stream of the client is full, its cancellations and answers still come in, and the requests that wait are bounded", async () => {
  await using t = new FaceHarness({ limits: { max_in_flight_requests: 2 } });
  const { session } = await t.initialize();
  strictEqual(
    (await t.post({ ...PING, method: "logging/setLevel", params: { level: "info" } }, session))
      .status,
    200,
  );
  // A GET stream that the client does not read, and 2 MiB of log messages for it.
  const get = await t.request({
    method: "GET",
    headers: { host: `127.0.0.1:${PORT}`, accept: "text/event-stream", "mcp-session-id": session },
  });
  const say = await t.post({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "say", arguments: { note: "x".repeat(200_000), times: 10 } },
  }, session);
  await messagesOf(say);
  // The next request finds the stream full: the ones after it wait (two at most), and one
  // more is refused at once.
  strictEqual((await t.post({ ...PING, id: 3 }, session)).status, 200);
  const waiting = [4, 5].map((id) => t.post({ ...PING, id }, session));
  const refused = await within(t.post({ ...PING, id: 6 }, session), 5_000, "the refusal");
  deepStrictEqual((await refused.json()).error.data.cause, "too_many_requests");
  // A notification does not wait for the output: it produces none.
  const note = await within(
    t.post(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } },
      session,
    ),
    5_000,
    "the cancellation",
  );
  strictEqual(note.status, 202);
  // The client reads its stream: the requests that waited are answered.
  await get.body!.cancel();
  for (const response of await Promise.all(waiting)) strictEqual(response.status, 200);
});

Deno.test("serve session: when serve stops, the requests that wait for the back pressure get the error stopping at once", async () => {
  await using t = new FaceHarness({ limits: { max_in_flight_requests: 4 } });
  const { session } = await t.initialize();
  await t.post({ ...PING, method: "logging/setLevel", params: { level: "info" } }, session);
  const get = await t.request({
    method: "GET",
    headers: { host: `127.0.0.1:${PORT}`, accept: "text/event-stream", "mcp-session-id": session },
  });
  await messagesOf(
    await t.post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "say", arguments: { note: "x".repeat(200_000), times: 10 } },
    }, session),
  );
  strictEqual((await t.post({ ...PING, id: 3 }, session)).status, 200);
  const waiting = [4, 5].map((id) => t.post({ ...PING, id }, session));
  const early = await Promise.race([
    Promise.any(waiting).then(() => "answered"),
    new Promise((resolve) => setTimeout(() => resolve("waits"), 100)),
  ]);
  strictEqual(early, "waits");
  t.face.stop();
  const stopping = {
    code: -32000,
    message: "The server stops. Try again later.",
    data: { cause: "stopping" },
  };
  const answers = await within(Promise.all(waiting), 5_000, "the answers of the waiting requests");
  for (const [i, response] of answers.entries()) {
    deepStrictEqual(await response.json(), { jsonrpc: "2.0", id: 4 + i, error: stopping });
  }
  await get.body!.cancel();
});
