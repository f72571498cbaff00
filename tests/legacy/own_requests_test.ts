/**
 * The link's own requests: a result, an error of the server, a time limit,
 * a body that ended without the response, the close; each settled once,
 * under ids that the upstream client never uses.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { OwnRequests } from "../../lib/legacy/own_requests.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { Message } from "../../lib/jsonrpc/message.ts";

function target() {
  const sent: Message[] = [];
  return { sent, send: (message: Message) => (sent.push(message), Promise.resolve()) };
}

const kindOf = (error: unknown) => error instanceof UpstreamFailure && error.kind;

Deno.test("OwnRequests: a result, an error, a time limit, a body without the response, the close", async () => {
  const own = new OwnRequests("own-");
  const t = target();
  const result = own.request(t, "ping", {}, 5_000);
  const error = own.request(t, "logging/setLevel", { level: "x" }, 5_000);
  const timeout = own.request(t, "resources/subscribe", { uri: "a" }, 10);
  const cut = own.request(t, "ping", {}, 5_000);
  const closed = own.request(t, "ping", {}, 5_000);
  deepStrictEqual(t.sent.map((m) => (m as { id: string }).id), [
    "own-1",
    "own-2",
    "own-3",
    "own-4",
    "own-5",
  ]);
  ok(own.answer("own-1", { jsonrpc: "2.0", id: "own-1", result: { a: 1 } }));
  deepStrictEqual(await result, { a: 1 });
  ok(own.answer("own-2", { jsonrpc: "2.0", id: "own-2", error: { code: -32602, message: "m" } }));
  await rejects(error, (e) => kindOf(e) === "rpc" && (e as UpstreamFailure).error?.code === -32602);
  await rejects(timeout, (e) => kindOf(e) === "timeout");
  ok(own.bodyEnd("own-4", undefined, 1));
  await rejects(cut, (e) => kindOf(e) === "transport_failed");
  own.close();
  await rejects(closed, (e) => kindOf(e) === "closed");
  // A second answer of an own id is still the link's (never the client's); other ids are not.
  strictEqual(own.answer("own-1", { jsonrpc: "2.0", id: "own-1", result: {} }), true);
  strictEqual(own.answer(1, { jsonrpc: "2.0", id: 1, result: {} }), false);
  strictEqual(own.bodyEnd(1, undefined, 1), false);
});
