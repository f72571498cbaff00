/**
 * Where the HTTP face of a session sends each message of its front end
 * (`lib/serve/http_channel.ts`), and the SSE stream of one response
 * (`lib/serve/event_stream.ts`): a request's messages on its POST stream,
 * the others on the GET stream (or waiting for one, bounded), a response
 * whose POST is gone dropped, an event per message also for a large one,
 * a keep-alive on a quiet stream, and a client that reads nothing cut.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { HttpChannel, MAX_WAITING } from "../../lib/serve/http_channel.ts";
import { EventStream } from "../../lib/serve/event_stream.ts";
import { createLogger } from "../../lib/log.ts";
import { readEvents } from "../../lib/http/sse.ts";
import type { Message } from "../../lib/jsonrpc/message.ts";

const dec = new TextDecoder();

function channel(options: { maxBacklogBytes?: number } = {}) {
  const lines: string[] = [];
  const log = createLogger("t", "debug", (line) => lines.push(line));
  return { channel: new HttpChannel({ log, ...options }), lines };
}

/** The messages of an SSE body until it ends. */
// deno-lint-ignore no-explicit-any
async function messages(body: ReadableStream<Uint8Array>): Promise<any[]> {
  const out: Message[] = [];
  for await (const event of readEvents(body, 1 << 26)) out.push(JSON.parse(dec.decode(event.data)));
  return out;
}

const note = (method: string): Message => ({ jsonrpc: "2.0", method });

Deno.test("http channel: a response at once is one JSON body; else a stream with the request's own messages, ended by its response", async () => {
  const { channel: ch } = channel();
  ch.openPost(1);
  ch.send({ jsonrpc: "2.0", id: 1, result: {} }, 1);
  const json = ch.reply(1);
  deepStrictEqual(json, { kind: "json", message: { jsonrpc: "2.0", id: 1, result: {} } });
  ch.openPost("a");
  const reply = ch.reply("a");
  if (reply.kind !== "stream") throw new Error(reply.kind);
  ch.send(note("notifications/progress"), "a");
  ch.send(note("notifications/tools/list_changed")); // of no request: not on this stream
  ch.send({ jsonrpc: "2.0", id: "b-1", method: "elicitation/create", params: {} }, "a");
  ch.send({ jsonrpc: "2.0", id: "a", result: { done: true } }, "a");
  ch.send(note("notifications/progress"), "a"); // after the response: the POST is gone
  deepStrictEqual((await messages(reply.stream.body)).map((m) => "method" in m ? m.method : m.id), [
    "notifications/progress",
    "elicitation/create",
    "a",
  ]);
  strictEqual(ch.hasPost("a"), false);
  // What had no place waits for the GET stream, in order.
  const get = ch.openGet();
  await ch.close();
  deepStrictEqual((await messages(get.body)).map((m) => "method" in m && m.method), [
    "notifications/tools/list_changed",
    "notifications/progress",
  ]);
});

Deno.test("http channel: the client dropped the POST: the response is dropped, the request's other messages go to the GET stream", async () => {
  const { channel: ch, lines } = channel();
  const get = ch.openGet();
  ch.openPost(5);
  const reply = ch.reply(5);
  if (reply.kind !== "stream") throw new Error(reply.kind);
  await reply.stream.body.cancel();
  ch.send(note("notifications/progress"), 5);
  ch.send({ jsonrpc: "2.0", id: 5, result: {} }, 5);
  await ch.close();
  deepStrictEqual((await messages(get.body)).map((m) => "method" in m && m.method), [
    "notifications/progress",
  ]);
  ok(lines.some((l) => l.includes("dropped a response")), lines.join(""));
});

Deno.test("http channel: at most MAX_WAITING messages wait for a GET stream; the oldest go first", async () => {
  const { channel: ch, lines } = channel();
  for (let i = 0; i < MAX_WAITING + 5; i++) {
    ch.send({ jsonrpc: "2.0", method: "notifications/message", params: { n: i } });
  }
  const get = ch.openGet();
  const reading = messages(get.body);
  await ch.close();
  const got = await reading;
  strictEqual(got.length, MAX_WAITING);
  deepStrictEqual(got[0].params.n, 5);
  ok(lines.some((l) => l.includes("dropped the 5 oldest messages")), lines.join(""));
});

Deno.test("http channel: the messages that wait for a GET stream are bounded in bytes too; a new GET stream gets them as its client reads, and is not cut", async () => {
  const { channel: ch, lines } = channel();
  const log = (n: number): Message => ({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: { n, pad: "x".repeat(1_000_000) } },
  });
  // 40 MB for no GET stream: the newest 16 (16 MiB) wait, the 24 oldest go with one line.
  for (let n = 0; n < 40; n++) ch.send(log(n));
  strictEqual(
    lines.filter((l) => l.includes("dropped")).length,
    0,
    "the line comes at the end of the run",
  );
  const get = ch.openGet();
  const drops = lines.filter((l) => l.includes("dropped"));
  strictEqual(drops.length, 1, lines.join(""));
  ok(drops[0]!.includes("dropped the 24 oldest messages"), drops[0]);
  // Its client reads nothing for a while, and more comes meanwhile: it waits, bounded.
  await new Promise((resolve) => setTimeout(resolve, 50));
  ok(get.open, "not cut");
  for (let n = 40; n < 45; n++) ch.send(log(n));
  const got: number[] = [];
  for await (const event of readEvents(get.body, 1 << 26)) {
    got.push(JSON.parse(dec.decode(event.data)).params.data.n);
    if (got.at(-1) === 44) break;
  }
  ok(got.length >= 16, `${got}`);
  deepStrictEqual(got, got.toSorted((a, b) => a - b));
  deepStrictEqual(got.slice(-5), [40, 41, 42, 43, 44]);
  // Each message is either received or counted on a line of drops.
  const dropped = lines.flatMap((l) => [...l.matchAll(/dropped the (\d+) oldest/g)])
    .reduce((sum, m) => sum + Number(m[1]), 0);
  strictEqual(dropped + got.length, 45, lines.join(""));
  ok(!lines.some((l) => l.includes("cut a stream")), lines.join(""));
  await ch.close();
});

Deno.test("event stream: every message is one event, a large one and one with line separators too", async () => {
  const stream = new EventStream({ maxBacklogBytes: 1 << 26 });
  const big = "x".repeat(600_000);
  stream.send({ jsonrpc: "2.0", id: 1, result: { text: big } });
  stream.send({ jsonrpc: "2.0", method: "m", params: { text: "a\nb\u2028c" } });
  const closed = stream.close();
  const got = await messages(stream.body);
  await closed;
  strictEqual(got.length, 2);
  strictEqual(got[0].result.text.length, big.length);
  strictEqual(got[1].params.text, "a\nb\u2028c");
});

Deno.test("event stream: a quiet stream gets a comment line; a client that reads nothing is cut", async () => {
  const ends: string[] = [];
  const quiet = new EventStream({ maxBacklogBytes: 1 << 20, keepAliveMs: 10 });
  const reader = quiet.body.getReader();
  const { value } = await reader.read();
  strictEqual(dec.decode(value), ": keep-alive\n\n");
  await reader.cancel();
  strictEqual(quiet.open, false);
  const stuck = new EventStream({
    maxBacklogBytes: 2 * 1024 * 1024,
    onEnd: (why) => ends.push(why),
  });
  // Nobody reads the body: past the backlog limit the stream is cut, and later messages dropped.
  for (let i = 0; i < 200 && stuck.open; i++) {
    stuck.send({ jsonrpc: "2.0", method: "m", params: { pad: "y".repeat(100_000) } });
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  deepStrictEqual([stuck.open, ends], [false, ["cut"]]);
  stuck.send(note("after"));
  ok(stuck.hold() === undefined);
});

Deno.test("http channel: answerEach gives each request whose POST waits one error; a later response of it is dropped", async () => {
  const { channel: ch, lines } = channel();
  for (const id of [1, 2]) ch.openPost(id);
  const replies = [1, 2].map((id) => ch.reply(id));
  const error = { code: -32000, message: "stops", data: { cause: "stopping" } };
  strictEqual(ch.answerEach(error), 2);
  ch.send({ jsonrpc: "2.0", id: 1, result: { late: true } }, 1);
  for (const [i, reply] of replies.entries()) {
    if (reply.kind !== "stream") throw new Error(reply.kind);
    deepStrictEqual(await messages(reply.stream.body), [{ jsonrpc: "2.0", id: i + 1, error }]);
  }
  strictEqual(ch.answerEach(error), 0, "none waits any more");
  ok(lines.some((line) => line.includes("dropped a response")), lines.join(""));
  await ch.close();
});
