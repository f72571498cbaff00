/**
 * The GET stream of a 2025-11-25 session against raw servers on 127.0.0.1:
 * which answers end the session (a 404; a 400 once a stream of the session
 * was open; no connection), which ones only wait (a first 400, a 503, a
 * redirect, which is not followed), and a 405 that stops it.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { GetStream, type SessionLoss } from "../../lib/legacy/get_stream.ts";
import { serveRaw } from "../fixtures/http_upstream.ts";
import { freePort } from "../free_port.ts";
import { waitFor } from "../wait.ts";

const WAITS = { firstMs: 20, maxMs: 80, healthyMs: 10_000 };

/** A stream on `url` with what it reported. */
function stream(url: string) {
  const losses: [SessionLoss, number | undefined][] = [];
  const messages: unknown[] = [];
  const debug: string[] = [];
  const get = new GetStream({
    url: new URL(url),
    fetch,
    headers: () => new Headers({ "mcp-session-id": "s-1" }),
    maxEventBytes: 1 << 16,
    waits: WAITS,
    onMessage: (message) => messages.push(message),
    onLoss: (loss, status) => losses.push([loss, status]),
    debug: (line) => debug.push(line),
  });
  get.start();
  return { get, losses, messages, debug };
}

/** A server whose answers to GET are `answers` in turn, then an SSE stream that ends at once. */
function serveAnswers(answers: (() => Response)[]) {
  let n = 0;
  return serveRaw(() => {
    const answer = answers[n++];
    if (answer) return answer();
    const event = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message"}\n\n`;
    return new Response(event, { headers: { "content-type": "text/event-stream" } });
  });
}

Deno.test("GET stream: a first 400, a 503 and a redirect wait; a 400 after an open stream is a lost session", async () => {
  await using target = serveRaw(() => new Response("never", { status: 200 }));
  await using server = serveAnswers([
    () => new Response(null, { status: 400 }),
    () => new Response(null, { status: 503 }),
    () => new Response(null, { status: 307, headers: { location: target.url } }),
  ]);
  // After the three refusals, streams that end at once, until the 400 of the fifth GET.
  const { get, losses, messages } = stream(server.url);
  await waitFor("two messages", () => messages.length >= 2);
  strictEqual(target.seen.length, 0, "the redirect is not followed");
  strictEqual(losses.length, 0);
  await get.close();
  await using lost = serveAnswers([
    () => new Response("data: {}\n\n", { headers: { "content-type": "text/event-stream" } }),
    () => new Response(null, { status: 400 }),
  ]);
  const second = stream(lost.url);
  await waitFor("the loss", () => second.losses.length === 1);
  deepStrictEqual(second.losses, [["session", 400]]);
  await second.get.close();
});

Deno.test("GET stream: a 404 is a lost session, no connection a lost server, a 405 stops it", async () => {
  await using gone = serveAnswers([() => new Response(null, { status: 404 })]);
  const a = stream(gone.url);
  await waitFor("the loss", () => a.losses.length === 1);
  deepStrictEqual(a.losses, [["session", 404]]);
  const b = stream(`http://127.0.0.1:${freePort()}/mcp`);
  await waitFor("the loss", () => b.losses.length === 1);
  deepStrictEqual(b.losses, [["connection", undefined]]);
  ok(!b.debug.join().includes("127.0.0.1"), "no URL in a debug line");
  await using none = serveAnswers([() => new Response(null, { status: 405 })]);
  const c = stream(none.url);
  await waitFor("the stop", () => c.debug.length === 1);
  deepStrictEqual(c.debug, ["the upstream server has no GET stream (HTTP status 405)"]);
  strictEqual(c.losses.length, 0);
  await Promise.all([a.get.close(), b.get.close(), c.get.close()]);
});
