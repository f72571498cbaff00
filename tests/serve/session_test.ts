/**
 * One session of `serve` on its own: a message that comes after the session
 * ended (a DELETE or the idle limit while the message waited) gets 404, not
 * a stream that never ends.
 */

import { strictEqual } from "node:assert/strict";
import { ServeSession } from "../../lib/serve/session.ts";
import { readClientFrame } from "../../lib/frontend/inbound.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { server } from "../fixtures/conformance_upstream.ts";

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
