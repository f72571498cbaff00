/**
 * The link of an upstream server of revision 2025-11-25 at a URL, in the
 * same process against a raw server on 127.0.0.1: the session of
 * initialize, MCP-Protocol-Version once the initialize result names it, the
 * GET stream after notifications/initialized, the DELETE of the session at
 * the close; a status fails its request only. A lost session (a 404 for it,
 * or a connection that failed and a server that answers again) gets a new
 * session with the client's initialize params, log level and subscriptions;
 * the GET stream opens again for as long as the session lives.
 * tests/process/passthrough_http_test.ts runs the program.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { connectLegacyHttp } from "../../lib/legacy/http_link.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { waitFor } from "../wait.ts";
import {
  type LegacyHttpServer,
  type LegacyRequest,
  serveLegacy,
  SESSION,
} from "../fixtures/legacy_http_server.ts";
import type { RenewOptions } from "../../lib/legacy/http_link.ts";

const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

/** Small waits: 40 ms, doubling up to 160 ms. */
const RENEW: RenewOptions = {
  firstMs: 40,
  maxMs: 160,
  healthyMs: 10_000,
  initializeTimeoutMs: 5_000,
};

async function open(
  url: string,
  info?: (message: string) => void,
  fetchFn?: typeof fetch,
): Promise<{ link: UpstreamLink; frames: UpstreamFrame[] }> {
  const link = await connectLegacyHttp({
    url: new URL(url),
    headers: [["x-key", "k"]],
    maxResponseBytes: 1 << 20,
    renew: RENEW,
    ...(info && { info }),
    ...(fetchFn && { fetch: fetchFn }),
  });
  const frames: UpstreamFrame[] = [];
  void link.read((frame) => void frames.push(frame));
  return { link, frames };
}

const call = (link: UpstreamLink, id: number, name: string) =>
  link.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

Deno.test("legacy HTTP link: the session and protocol version after initialize, the GET stream, the DELETE at the close", async () => {
  await using server = serveLegacy();
  const { link, frames } = await open(server.url);
  strictEqual(link.isRemote, true);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await call(link, 2, "echo");
  await waitFor("the call's result", () => frames.length === 2);
  deepStrictEqual(frames[1], {
    kind: "message",
    value: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "called echo" }] } },
  });
  await waitFor("the GET stream", () => server.requests.some((r) => r.method === "GET"));
  const [init, ...later] = server.requests.filter((r) => r.method === "POST");
  strictEqual(init!.headers.get("mcp-session-id"), null);
  ok(server.requests.every((r) => r.headers.get("x-key") === "k"), "the headers of --header-env");
  for (const request of later) {
    strictEqual(request.headers.get("mcp-session-id"), SESSION);
    strictEqual(request.headers.get("mcp-protocol-version"), "2025-06-18");
  }
  await link.close();
  const deletes = server.requests.filter((r) => r.method === "DELETE");
  deepStrictEqual(deletes.map((r) => r.headers.get("mcp-session-id")), [SESSION]);
  deepStrictEqual(await link.ended, { kind: "closed" });
  await rejects(call(link, 3, "echo"), UpstreamFailure);
});

Deno.test("legacy HTTP link: a status fails its request only, without the body", async () => {
  await using server = serveLegacy();
  const { link, frames } = await open(server.url);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await call(link, 2, "fail");
  await waitFor("the failure", () => frames.length === 2);
  const failed = frames[1] as { kind: string; id: unknown; failure: UpstreamFailure };
  deepStrictEqual([failed.kind, failed.id, failed.failure.kind, failed.failure.status], [
    "failed",
    2,
    "transport_failed",
    500,
  ]);
  ok(!JSON.stringify({ ...failed.failure, m: failed.failure.message }).includes("s3cret"));
  // The link goes on after a failed request.
  await call(link, 3, "echo");
  await waitFor("the result", () => frames.length === 3);
  strictEqual((frames[2] as { kind: string }).kind, "message");
  await link.close();
});

/** The frames of the request `id`. */
const framesOf = (frames: UpstreamFrame[], id: number) =>
  frames.filter((f) =>
    f.kind === "failed" ? f.id === id : f.kind === "message" && f.value.id === id
  );

/** The kind of the one frame of `id`: its failure, or `result`. */
function outcomeOf(frames: UpstreamFrame[], id: number): string {
  const [frame, ...more] = framesOf(frames, id);
  strictEqual(more.length, 0, `one frame for the request ${id}`);
  if (!frame) return "none";
  if (frame.kind === "failed") {
    const { kind, status } = frame.failure;
    return status === undefined ? kind : `${kind} ${status}`;
  }
  return "result";
}

/** The POSTs of `session` (their messages). */
const postsIn = (server: LegacyHttpServer, session: string | null) =>
  server.requests.filter((r) => r.method === "POST" && r.headers.get("mcp-session-id") === session)
    .map((r) => (r as LegacyRequest & { message: Record<string, unknown> }).message);

/** A tools/call whose response never comes (an SSE stream that stays open). */
const hang = (name: string) =>
  name === "hang"
    ? new Response(new ReadableStream(), { headers: { "content-type": "text/event-stream" } })
    : undefined;

/** initialize, notifications/initialized, logging/setLevel, two subscriptions and one unsubscribe. */
async function setUp(link: UpstreamLink, frames: UpstreamFrame[]): Promise<void> {
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const requests: [number, string, JsonObject][] = [
    [2, "logging/setLevel", { level: "debug" }],
    [3, "resources/subscribe", { uri: "file:///kept" }],
    [4, "resources/subscribe", { uri: "file:///dropped" }],
    [5, "resources/unsubscribe", { uri: "file:///dropped" }],
  ];
  for (const [id, method, params] of requests) {
    await link.send({ jsonrpc: "2.0", id, method, params });
    await waitFor(`the response of ${id}`, () => framesOf(frames, id).length === 1);
  }
}

Deno.test("legacy HTTP link: a 404 for the session fails what is in flight once and starts a new session with the client's setup", async () => {
  await using server = serveLegacy({ tool: hang, getStream: true });
  const infos: string[] = [];
  const { link, frames } = await open(server.url, (line) => infos.push(line));
  await setUp(link, frames);
  // A request of the server in the old session, answered only after the new one started.
  await waitFor("the GET stream", () => server.streams() === 1);
  server.push({ jsonrpc: "2.0", id: 0, method: "roots/list" });
  await waitFor(
    "the request of the server",
    () => frames.some((f) => f.kind === "message" && f.value.method === "roots/list"),
  );
  await call(link, 6, "hang");
  await waitFor("the call in flight", () => postsIn(server, SESSION).some((m) => m.id === 6));
  await call(link, 7, "expire");
  await waitFor("the expired session", () => framesOf(frames, 7).length === 1);
  // The first request of the lost session gets `closed`, and the one in flight too.
  await call(link, 8, "echo");
  await waitFor("the new session", () => server.sessions.length === 2);
  const renewed = `${SESSION}-2`;
  await waitFor("its setup", () => postsIn(server, renewed).length === 3);
  deepStrictEqual(postsIn(server, null).map((m) => m.params), [INIT, INIT]);
  // The setup goes out at once, each request on a connection of its own: in any order.
  const [first, ...restored] = postsIn(server, renewed).map((m) => [m.method, m.params]);
  deepStrictEqual(first, ["notifications/initialized", undefined]);
  deepStrictEqual(
    restored.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    [
      ["logging/setLevel", { level: "debug" }],
      ["resources/subscribe", { uri: "file:///kept" }],
    ],
  );
  await waitFor("the GET stream of the new session", () => server.streams() === 1);
  await link.send({ jsonrpc: "2.0", id: 0, result: { roots: [] } });
  await call(link, 9, "echo");
  await waitFor("the call in the new session", () => framesOf(frames, 9).length === 1);
  strictEqual(outcomeOf(frames, 6), "closed 404");
  strictEqual(outcomeOf(frames, 7), "result");
  strictEqual(outcomeOf(frames, 8), "closed 404");
  strictEqual(outcomeOf(frames, 9), "result");
  // Never sent again, and no frame for the link's own requests.
  for (const id of [6, 7, 8]) {
    strictEqual(postsIn(server, renewed).filter((m) => m.id === id).length, 0);
  }
  ok(frames.every((f) => f.kind !== "message" || typeof f.value.id !== "string"));
  // The answer to the old session's request does not reach the new one; the call does.
  deepStrictEqual(postsIn(server, renewed).slice(3).map((m) => m.id), [9]);
  deepStrictEqual(infos, [
    "a new session of the upstream server started: it did not know the session (HTTP status 404)",
  ]);
  ok(!infos.join().includes(server.url));
  await link.close();
  strictEqual(framesOf(frames, 6).length, 1, "the request in flight is not answered twice");
  deepStrictEqual(
    server.requests.filter((r) => r.method === "DELETE").map((r) =>
      r.headers.get("mcp-session-id")
    ),
    [renewed],
  );
});

Deno.test("legacy HTTP link: the GET stream opens again after each loss and each refusal, with the wait", async () => {
  await using server = serveLegacy({ getStream: true });
  const { link, frames } = await open(server.url);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const gets = () => server.requests.filter((r) => r.method === "GET");
  for (let drop = 1; drop <= 3; drop++) {
    await waitFor(`stream ${drop}`, () => server.streams() === 1);
    server.dropStreams();
  }
  await waitFor("the fourth stream", () => server.streams() === 1);
  server.push({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  await waitFor("the notification", () => frames.length === 2);
  deepStrictEqual(frames[1], {
    kind: "message",
    value: { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
  });
  strictEqual(gets().length, 4);
  ok(gets().every((r) => r.headers.get("mcp-session-id") === SESSION));
  ok(gets().every((r) => r.headers.get("mcp-protocol-version") === "2025-06-18"));
  ok(gets().every((r) => r.headers.get("x-key") === "k"));
  strictEqual(server.sessions.length, 1, "a stream that ends is not a lost session");
  await link.close();
});

Deno.test("legacy HTTP link: a 404 for the GET stream starts a new session, with no request of the client", async () => {
  await using server = serveLegacy({ getStream: true });
  const infos: string[] = [];
  const { link, frames } = await open(server.url, (line) => infos.push(line));
  await setUp(link, frames);
  await waitFor("the GET stream", () => server.streams() === 1);
  await call(link, 6, "expire");
  await waitFor("the result", () => framesOf(frames, 6).length === 1);
  server.dropStreams();
  await waitFor("the GET stream of the new session", () => server.streams() === 1);
  const gets = server.requests.filter((r) => r.method === "GET");
  deepStrictEqual(gets.map((r) => r.headers.get("mcp-session-id")), [
    SESSION,
    SESSION,
    `${SESSION}-2`,
  ]);
  deepStrictEqual(infos, [
    "a new session of the upstream server started: it did not know the session (HTTP status 404)",
  ]);
  await link.close();
});

Deno.test("legacy HTTP link: a GET stream refused again and again (503) opens when the server takes it", async () => {
  let refusals = 0;
  await using server = serveLegacy({
    getStream: true,
    onGet: () => refusals++ < 4 ? new Response(null, { status: 503 }) : undefined,
  });
  const { link, frames } = await open(server.url);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  const since = performance.now();
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await waitFor("the stream after four refusals", () => server.streams() === 1);
  // The waits 40, 80, 160, 160 ms.
  ok(performance.now() - since >= 400, "the waits double");
  server.push({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "a" } });
  await waitFor("the notification", () => frames.length === 2);
  await link.close();
});

Deno.test("legacy HTTP link: while the server is away a request fails at once; when it answers again, a new session", async () => {
  const first = serveLegacy({ getStream: true });
  const port = first.port;
  const infos: string[] = [];
  // The real fetch, counted: a request while the server is away sends nothing.
  let posts = 0;
  const counted: typeof fetch = (input, init) => {
    if (init?.method === "POST") posts++;
    return fetch(input, init);
  };
  const { link, frames } = await open(first.url, (line) => infos.push(line), counted);
  await setUp(link, frames);
  await waitFor("the GET stream", () => first.streams() === 1);
  await first.close();
  // The stream ended; it opens again after the wait, finds no server, and the session is lost.
  let id = 10;
  await waitFor("a request that fails at once, without a POST", async () => {
    const [sent, n] = [posts, id++];
    await call(link, n, "echo");
    await waitFor(`the answer to ${n}`, () => framesOf(frames, n).length === 1);
    return posts === sent;
  }, { timeoutMs: 10_000 });
  strictEqual(outcomeOf(frames, id - 1), "transport_failed");
  for (let n = 10; n < id; n++) ok(["transport_failed", "result"].includes(outcomeOf(frames, n)));
  await using second = serveLegacy({ getStream: true, sessionPrefix: "restarted", port });
  await waitFor("the new session", () => second.streams() === 1, { timeoutMs: 10_000 });
  deepStrictEqual(postsIn(second, null).map((m) => m.params), [INIT]);
  await waitFor("the setup", () => postsIn(second, "restarted").length === 3);
  deepStrictEqual(postsIn(second, "restarted").map((m) => m.method), [
    "notifications/initialized",
    "logging/setLevel",
    "resources/subscribe",
  ]);
  await call(link, 99, "echo");
  await waitFor("the call in the new session", () => framesOf(frames, 99).length === 1);
  strictEqual(outcomeOf(frames, 99), "result");
  second.push({
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri: "file:///kept" },
  });
  await waitFor(
    "the update in the new session",
    () =>
      frames.some((f) =>
        f.kind === "message" && f.value.method === "notifications/resources/updated"
      ),
  );
  deepStrictEqual(infos, [
    "a new session of the upstream server started: the connection failed, and the server answers again",
  ]);
  await link.close();
});
