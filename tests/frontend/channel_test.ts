/**
 * The front end's seam to its face (`lib/frontend/channel.ts`): each message
 * for the client names the request of the client it belongs to (its
 * response, its progress, the input requests of its rounds), and the
 * messages of no request (events of the listen stream, the error of a line
 * without an id) name none; a request that ends without its response (a
 * cancellation) is said to be over. The HTTP face of `serve` routes on
 * this; the stdio face writes lines in the same order.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Frontend } from "../../lib/frontend/frontend.ts";
import type { ClientChannel } from "../../lib/frontend/channel.ts";
import type { Message, RequestId } from "../../lib/jsonrpc/message.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { server } from "../fixtures/conformance_upstream.ts";
import { waitFor } from "../wait.ts";

const enc = new TextEncoder();

/** A front end on `channel`, in front of the fixture, and how to give it a message. */
function frontendOn(channel: ClientChannel) {
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: { ...DEFAULT_LIMITS, shutdown_grace_ms: 200 },
    log: SILENT_LOGGER,
    fallback: { name: "t", version: "1" },
    connect: () => connectMemoryLink(server),
    channel,
  });
  const accept = (message: object) =>
    frontend.accept({ kind: "line", bytes: enc.encode(JSON.stringify(message)) });
  return { frontend, accept };
}

Deno.test("front end: every message names the client's request it belongs to; events name none", async () => {
  const sent: { message: Message; related: RequestId | undefined }[] = [];
  const channel: ClientChannel = {
    send: (message, related) => void sent.push({ message, related }),
    hold: () => undefined,
    close: () => Promise.resolve(),
  };
  const { frontend, accept } = frontendOn(channel);
  const responseOf = (id: RequestId) =>
    waitFor(
      `the response ${String(id)}`,
      () => sent.find((s) => "id" in s.message && s.message.id === id && !("method" in s.message)),
    );
  accept({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      clientInfo: { name: "c", version: "1" },
    },
  });
  strictEqual((await responseOf(1)).related, 1);
  accept({ jsonrpc: "2.0", method: "notifications/initialized" });
  accept({
    jsonrpc: "2.0",
    id: "two",
    method: "tools/call",
    params: { name: "test_tool_with_progress", arguments: {}, _meta: { progressToken: 7 } },
  });
  strictEqual((await responseOf("two")).related, "two");
  const progress = sent.filter((s) =>
    "method" in s.message && s.message.method === "notifications/progress"
  );
  deepStrictEqual(progress.map((s) => s.related), ["two", "two", "two"]);
  accept({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "ask", arguments: {} } });
  const question = await waitFor(
    "the input request",
    () => sent.find((s) => "method" in s.message && s.message.method === "elicitation/create"),
  );
  strictEqual(question.related, 3);
  accept({
    jsonrpc: "2.0",
    id: (question.message as { id: string }).id,
    result: { action: "accept", content: { a: "x" } },
  });
  strictEqual((await responseOf(3)).related, 3);
  accept({
    jsonrpc: "2.0",
    id: 4,
    method: "resources/subscribe",
    params: { uri: "test://static-text" },
  });
  strictEqual((await responseOf(4)).related, 4);
  accept({
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "touch", arguments: { uri: "test://static-text" } },
  });
  const update = await waitFor(
    "the update",
    () =>
      sent.find((s) =>
        "method" in s.message && s.message.method === "notifications/resources/updated"
      ),
  );
  strictEqual(update.related, undefined);
  // The events of the first acknowledgment (one per declared list) belong to no request either.
  const changes = sent.filter((s) =>
    "method" in s.message && s.message.method.endsWith("/list_changed")
  );
  deepStrictEqual(new Set(changes.map((s) => s.related)), new Set([undefined]));
  // A line that is not valid: its error has no request to belong to.
  frontend.accept({ kind: "line", bytes: enc.encode("{not json") });
  strictEqual(sent.at(-1)?.related, undefined);
  await frontend.shutdown();
});

Deno.test("front end: a request that ends without its response (a cancellation) is unanswered to its face; an answered one is not", async () => {
  const sent: Message[] = [];
  const unanswered: RequestId[] = [];
  const channel: ClientChannel = {
    send: (message) => void sent.push(message),
    hold: () => undefined,
    unanswered: (id) => void unanswered.push(id),
    close: () => Promise.resolve(),
  };
  const { frontend, accept } = frontendOn(channel);
  const answered = (id: RequestId) =>
    waitFor(`the response ${String(id)}`, () => sent.some((m) => "id" in m && m.id === id));
  accept({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    },
  });
  await answered(1);
  accept({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 5_000 } },
  });
  accept({ jsonrpc: "2.0", id: 3, method: "tools/list" });
  await answered(3);
  accept({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
  await waitFor("the canceled request to be over", () => unanswered.length > 0);
  deepStrictEqual(unanswered, [2]);
  strictEqual(sent.some((m) => "id" in m && m.id === 2), false);
  await frontend.shutdown();
});
