/**
 * The rules of the HTTP face of `serve` (revision 2025-11-25 Streamable
 * HTTP and its security warning), on the face's handler in process: the
 * session id and its 400/404, DELETE, the guard (Host, Origin, token), the
 * media types, the body's limits and errors, the bounds, and which body a
 * response takes (JSON for an answer at once, else an SSE stream).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { tokenDigest } from "../../lib/serve/guard.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { waitFor, within } from "../wait.ts";
import { readEvents } from "../../lib/http/sse.ts";
import { EventStream, StreamCut } from "../../lib/serve/event_stream.ts";
import { BASE, FaceHarness, INIT_PARAMS, messagesOf, PORT, postHeaders } from "./face_harness.ts";

type Obj = Record<string, unknown>;
const errorOf = (message: Obj | undefined) => message?.error as { code: number; message: string };

Deno.test("serve face: initialize starts a session with a visible-ASCII id; the answers of a request come on its own stream", async () => {
  await using t = new FaceHarness();
  const response = await t.post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: INIT_PARAMS,
  });
  strictEqual(response.status, 200);
  strictEqual(response.headers.get("content-type"), "text/event-stream");
  const session = response.headers.get("mcp-session-id")!;
  ok(/^[A-Za-z0-9_-]{32}$/.test(session), session);
  const [init] = await messagesOf(response);
  strictEqual((init!.result as Obj).protocolVersion, "2025-11-25");
  // A ping is answered at once: one JSON body.
  const ping = await t.post({ jsonrpc: "2.0", id: "p", method: "ping" }, session);
  strictEqual(ping.headers.get("content-type"), "application/json");
  deepStrictEqual(await ping.json(), { jsonrpc: "2.0", id: "p", result: {} });
  // A notification: 202 and no body.
  const note = await t.post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
  deepStrictEqual([note.status, await note.text()], [202, ""]);
  // A forwarded request: an SSE stream that ends with its response.
  const call = await t.post({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "test_tool_with_progress", arguments: {}, _meta: { progressToken: "t" } },
  }, session);
  const messages = await messagesOf(call);
  deepStrictEqual(
    messages.map((m) => m.method ?? `response ${m.id}`),
    ["notifications/progress", "notifications/progress", "notifications/progress", "response 2"],
  );
});

Deno.test("serve face: the session id is required (400), an unknown one is 404, DELETE ends a session", async () => {
  await using t = new FaceHarness();
  const none = await t.post({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  strictEqual(none.status, 400);
  strictEqual(errorOf(await none.json()).code, -32000);
  // server/discover needs no session: -32601 in every state.
  // A client of revision 2026-07-28 too: its header names a revision the face does not speak,
  // but a request without a session is not of a negotiated revision.
  const discover = await t.post({ jsonrpc: "2.0", id: 9, method: "server/discover" }, undefined, {
    "mcp-protocol-version": "2026-07-28",
  });
  strictEqual(errorOf(await discover.json()).code, -32601);
  const unknown = await t.post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, "nope");
  strictEqual(unknown.status, 404);
  strictEqual(errorOf(await unknown.json()).code, -32001);
  const { session } = await t.initialize();
  strictEqual(t.face.size, 1);
  const gone = await t.request({ method: "DELETE", headers: postHeaders(session) });
  strictEqual(gone.status, 200);
  strictEqual(t.face.size, 0);
  const after = await t.post({ jsonrpc: "2.0", id: 3, method: "ping" }, session);
  strictEqual(after.status, 404);
  const get = await t.request({
    method: "GET",
    headers: { host: `127.0.0.1:${PORT}`, accept: "text/event-stream", "mcp-session-id": session },
  });
  strictEqual(get.status, 404);
});

Deno.test("serve face: DNS rebinding: a Host that is not loopback and an Origin that is not allowed get 403; an allowed origin gets CORS", async () => {
  await using t = new FaceHarness({ guard: { allowedOrigins: ["https://app.example.com"] } });
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS };
  const evilHost = await t.post(init, undefined, { host: `evil.example.com:${PORT}` });
  strictEqual(evilHost.status, 403);
  const evilOrigin = await t.post(init, undefined, { origin: "http://evil.example.com" });
  strictEqual(evilOrigin.status, 403);
  strictEqual((await evilOrigin.json()).id, null);
  const nullOrigin = await t.post(init, undefined, { origin: "null" });
  strictEqual(nullOrigin.status, 403);
  const own = await t.post(init, undefined, { origin: `http://localhost:${PORT}` });
  strictEqual(own.status, 200);
  await own.body?.cancel();
  const allowed = await t.post(init, undefined, { origin: "https://app.example.com" });
  strictEqual(allowed.status, 200);
  strictEqual(allowed.headers.get("access-control-allow-origin"), "https://app.example.com");
  ok(allowed.headers.get("access-control-expose-headers")?.includes("mcp-session-id"));
  await allowed.body?.cancel();
  const preflight = await t.request({
    method: "OPTIONS",
    headers: { host: `127.0.0.1:${PORT}`, origin: "https://app.example.com" },
  });
  strictEqual(preflight.status, 204);
  ok(preflight.headers.get("access-control-allow-headers")?.includes("mcp-session-id"));
});

Deno.test("serve face: with a token every request needs it as a bearer token (401 with WWW-Authenticate)", async () => {
  await using t = new FaceHarness({
    guard: { host: "0.0.0.0", tokenDigest: await tokenDigest("s3cret") },
  });
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS };
  for (
    const authorization of [undefined, "Bearer wrong", "Bearer s3cret2", "Basic s3cret", "s3cret"]
  ) {
    const response = await t.post(init, undefined, authorization ? { authorization } : {});
    strictEqual(response.status, 401, authorization);
    strictEqual(response.headers.get("www-authenticate"), 'Bearer realm="mcp"');
    await response.body?.cancel();
  }
  // Not on loopback, the Host is not checked (a proxy may rewrite it); the token is.
  const right = await t.post(init, undefined, {
    authorization: "Bearer s3cret",
    host: "mcp.example.com",
  });
  strictEqual(right.status, 200);
  await right.body?.cancel();
  // A browser's CORS preflight never carries credentials: it passes without the token,
  // and the POST after it still needs the token.
  await using web = new FaceHarness({
    guard: {
      host: "0.0.0.0",
      tokenDigest: await tokenDigest("s3cret"),
      allowedOrigins: ["https://app.example.com"],
    },
  });
  const origin = "https://app.example.com";
  const preflight = await web.request({
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, content-type",
    },
  });
  strictEqual(preflight.status, 204);
  strictEqual(preflight.headers.get("access-control-allow-origin"), origin);
  const bare = await web.post(init, undefined, { origin });
  strictEqual(bare.status, 401);
  await bare.body?.cancel();
  const withToken = await web.post(init, undefined, { origin, authorization: "Bearer s3cret" });
  strictEqual(withToken.status, 200);
  await withToken.body?.cancel();
});

Deno.test("serve face: media types, methods and the protocol version header", async () => {
  await using t = new FaceHarness();
  const { session } = await t.initialize();
  const ping = { jsonrpc: "2.0", id: 5, method: "ping" };
  strictEqual((await t.post(ping, session, { "content-type": "text/plain" })).status, 415);
  strictEqual((await t.post(ping, session, { accept: "application/json" })).status, 406);
  strictEqual((await t.post(ping, session, { accept: "*/*" })).status, 200);
  strictEqual((await t.post(ping, session, { "mcp-protocol-version": "1999-01-01" })).status, 400);
  strictEqual((await t.post(ping, session, { "mcp-protocol-version": "2025-11-25" })).status, 200);
  const put = await t.request({ method: "PUT", headers: postHeaders(session), body: "{}" });
  deepStrictEqual([put.status, put.headers.get("allow")], [405, "GET, POST, DELETE"]);
  const get = await t.request({
    method: "GET",
    headers: postHeaders(session, { accept: "application/json" }),
  });
  strictEqual(get.status, 406);
  const other = { method: "POST", path: "/other", body: "{}" };
  strictEqual((await t.request({ ...other, headers: { host: `127.0.0.1:${PORT}` } })).status, 404);
  // The guard comes first: a request that it refuses learns nothing of the paths.
  strictEqual((await t.request(other)).status, 403);
});

Deno.test("serve face: a body is read as a line of the stdio face: its limit, its depth, and the same id scan", async () => {
  await using t = new FaceHarness({ limits: { max_line_bytes: 200, max_depth: 5 } });
  const { session } = await t.initialize({
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  });
  const long = await t.post(
    `{"jsonrpc":"2.0","id":41,"method":"ping","params":{"x":"${"a".repeat(400)}"}}`,
    session,
  );
  strictEqual(long.status, 200);
  const longBody = await long.json();
  deepStrictEqual([longBody.id, longBody.error.code, longBody.error.data.cause], [
    41,
    -32600,
    "line_too_long",
  ]);
  const deep = await t.post(
    `{"jsonrpc":"2.0","id":42,"method":"ping","params":${"[".repeat(9)}${"]".repeat(9)}}`,
    session,
  );
  deepStrictEqual([(await deep.json()).error.data.cause], ["too_deep"]);
  const bad = await t.post("{not json", session);
  strictEqual(bad.status, 400);
  deepStrictEqual(await bad.json(), {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32700,
      message: "The request is not valid JSON.",
      data: { cause: "parse_error" },
    },
  });
  // Pretty-printed JSON is one message: a body is not split at its newlines.
  const pretty = await t.post(
    JSON.stringify({ jsonrpc: "2.0", id: 43, method: "ping" }, null, 2),
    session,
  );
  deepStrictEqual(await pretty.json(), { jsonrpc: "2.0", id: 43, result: {} });
});

Deno.test("serve face: a body that does not arrive in time gets 408", async () => {
  await using t = new FaceHarness({ face: { bodyTimeoutMs: 50 } });
  const { session } = await t.initialize();
  const never = new ReadableStream<Uint8Array>({ start: () => {} });
  const response = await t.request({ method: "POST", headers: postHeaders(session), body: never });
  strictEqual(response.status, 408);
});

Deno.test("serve face: the bodies being read at once share a budget: one past it gets 503, and its bytes come back", async () => {
  await using t = new FaceHarness({ face: { bodyBudgetBytes: 1_000 } });
  const { session } = await t.initialize();
  // A client that sends 800 bytes and pauses holds them while its body is read.
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const slow = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  controller.enqueue(new TextEncoder().encode(`{"jsonrpc":"2.0","id":1,"x":"${"a".repeat(770)}`));
  const held = t.request({ method: "POST", headers: postHeaders(session), body: slow });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const ping = { jsonrpc: "2.0", id: 2, method: "ping", params: { pad: "b".repeat(300) } };
  const other = await t.post(ping, session);
  deepStrictEqual([other.status, other.headers.get("retry-after")], [503, "1"]);
  await other.body?.cancel();
  // The slow body ends, cut (the parse error of the id its scan finds); its bytes are back,
  // and the next body fits.
  controller.close();
  const cut = await (await held).json();
  deepStrictEqual([cut.id, cut.error.code], [1, -32700]);
  const again = await t.post(ping, session);
  deepStrictEqual(await again.json(), { jsonrpc: "2.0", id: 2, result: {} });
});

Deno.test("serve face: sessions are bounded: one above --max-sessions gets 503", async () => {
  await using t = new FaceHarness({ face: { maxSessions: 2 } });
  await t.initialize();
  await t.initialize();
  const third = await t.post({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS });
  deepStrictEqual([third.status, third.headers.get("retry-after")], [503, "5"]);
  ok(t.lines.some((l) => l.includes("2 sessions run")), t.lines.join(""));
});

Deno.test("serve face: an id that is in flight on another POST gets its error at once; the first request goes on", async () => {
  await using t = new FaceHarness();
  const { session } = await t.initialize();
  const call = {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 300 } },
  };
  const first = await t.post(call, session);
  const second = await t.post(call, session);
  const error = await second.json();
  deepStrictEqual([error.id, error.error.data.detail], [
    7,
    "the id belongs to a request in flight",
  ]);
  const [done] = await messagesOf(first);
  deepStrictEqual([done!.id, ((done!.result as Obj).content as Obj[])[0]!.text], [7, "slow done"]);
});

Deno.test("serve face: a canceled request gets no response and its stream ends; the same id of another session goes on", async () => {
  await using t = new FaceHarness();
  const a = await t.initialize();
  const b = await t.initialize();
  const call = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 400 } },
  };
  const canceled = await t.post(call, a.session);
  const other = await t.post(call, b.session);
  const cancel = await t.post({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 5, reason: "the user stopped it" },
  }, a.session);
  strictEqual(cancel.status, 202);
  // The stream of the canceled request ends, with nothing in it (no response, as on stdio).
  deepStrictEqual(await within(messagesOf(canceled), 5_000, "the end of the stream"), []);
  const [done] = await messagesOf(other);
  deepStrictEqual([done!.id, ((done!.result as Obj).content as Obj[])[0]!.text], [5, "slow done"]);
  // The id is free again in its session.
  const again = await t.post(
    { ...call, params: { name: "slow", arguments: { ms: 1 } } },
    a.session,
  );
  const [after] = await messagesOf(again);
  deepStrictEqual([after!.id, ((after!.result as Obj).content as Obj[])[0]!.text], [
    5,
    "slow done",
  ]);
});

Deno.test("serve face: a session with no stream and no request for the idle limit ends", async () => {
  await using t = new FaceHarness({ face: { sessionIdleMs: 80 } });
  const { session } = await t.initialize();
  await waitFor("the session to end", () => t.face.size === 0);
  strictEqual((await t.post({ jsonrpc: "2.0", id: 2, method: "ping" }, session)).status, 404);
  ok(t.lines.some((l) => l.includes("sent nothing for the idle limit")), t.lines.join(""));
});

Deno.test("serve face: an initialize that fails ends its session; the next one starts a new session", async () => {
  let tries = 0;
  await using t = new FaceHarness({
    connect: () =>
      Promise.reject(new UpstreamFailure(++tries === 1 ? "spawn_failed" : "spawn_failed")),
  });
  const response = await t.post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: INIT_PARAMS,
  });
  const session = response.headers.get("mcp-session-id")!;
  const [failed] = await messagesOf(response);
  strictEqual((failed!.error as Obj & { data: Obj }).data.cause, "spawn_failed");
  await waitFor("the session to end", () => t.face.size === 0);
  strictEqual((await t.post({ jsonrpc: "2.0", id: 2, method: "ping" }, session)).status, 404);
});

Deno.test("serve face: while serve stops, new sessions, requests and streams get 503; a request in flight still gets the client's answer and its cancellation", async () => {
  await using t = new FaceHarness();
  const { session } = await t.initialize();
  const ask = await t.post({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "ask", arguments: { question: "name?" } },
  }, session);
  const events = readEvents(ask.body!, 1 << 20);
  const question = JSON.parse(new TextDecoder().decode((await events.next()).value!.data));
  strictEqual(question.method, "elicitation/create");
  const slow = await t.post({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 5_000 } },
  }, session);
  t.face.stop();
  const refused = [
    await t.post({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS }),
    await t.post({ jsonrpc: "2.0", id: 4, method: "ping" }, session),
    await t.request({
      method: "GET",
      headers: {
        host: `127.0.0.1:${PORT}`,
        accept: "text/event-stream",
        "mcp-session-id": session,
      },
    }),
  ];
  for (const response of refused) {
    deepStrictEqual([response.status, response.headers.get("retry-after")], [503, "5"]);
    await response.body?.cancel();
  }
  // The answer of the client reaches the request in flight, which finishes.
  const answer = await t.post({
    jsonrpc: "2.0",
    id: question.id,
    result: { action: "accept", content: { a: "Ada" } },
  }, session);
  strictEqual(answer.status, 202);
  const response = JSON.parse(new TextDecoder().decode((await events.next()).value!.data));
  strictEqual(((response.result as Obj).content as Obj[])[0]!.text, "answered: Ada");
  // A cancellation too: the slow call ends without a response.
  const cancel = await t.post({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 3 },
  }, session);
  strictEqual(cancel.status, 202);
  deepStrictEqual(await within(messagesOf(slow), 5_000, "the end of the canceled call"), []);
  await within(t.face.drain(5_000), 6_000, "the drain");
});

Deno.test("serve face: a second GET stream takes the place of the first, which ends", async () => {
  await using t = new FaceHarness();
  const { session } = await t.initialize();
  const headers = {
    host: `127.0.0.1:${PORT}`,
    accept: "text/event-stream",
    "mcp-session-id": session,
  };
  const first = await t.request({ method: "GET", headers });
  strictEqual(first.status, 200);
  const second = await t.request({ method: "GET", headers });
  strictEqual(second.status, 200);
  // The first ends (with the events of the first acknowledgment, which waited
  // for a GET stream: one list change per declared list); the second gets the next ones.
  const waited = await messagesOf(first);
  ok(waited.every((m) => String(m.method).endsWith("/list_changed")), JSON.stringify(waited));
  const subscribe = await t.post({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "add_tool", arguments: { name: "x1" } },
  }, session);
  await messagesOf(subscribe);
  const events = readEvents(second.body!, 1 << 20);
  const event = await events.next();
  strictEqual(
    JSON.parse(new TextDecoder().decode(event.value!.data)).method,
    "notifications/tools/list_changed",
  );
  await events.return(undefined);
  strictEqual(new URL(BASE).port, String(PORT));
});

Deno.test("serve face: Deno.serve gives its error handler the cut of a stream, which logs one line and no stack", async () => {
  await using t = new FaceHarness();
  const seen: unknown[] = [];
  const stream = new EventStream({ maxBacklogBytes: 1024 });
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
    onError: (error) => {
      seen.push(error);
      return t.face.onError(error);
    },
  }, () => new Response(stream.body, { headers: { "content-type": "text/event-stream" } }));
  try {
    const response = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    stream.send({ jsonrpc: "2.0", method: "m", params: { pad: "y".repeat(4096) } });
    await response.body?.cancel().catch(() => {});
    await waitFor("the error handler", () => seen.length > 0);
  } finally {
    await server.shutdown();
  }
  ok(seen[0] instanceof StreamCut, String(seen[0]));
  const before = t.lines.length;
  strictEqual((t.face.onError(new TypeError("boom")) as Response).status, 500);
  deepStrictEqual(t.lines.slice(before).map((l) => l.trimEnd()), [
    "[t] warn: a response failed: TypeError",
  ]);
});

Deno.test("serve face: a session whose client only sent initialize ends after the initialization limit and frees its place; an initialized one stays", async () => {
  await using t = new FaceHarness({ face: { maxSessions: 2, initTimeoutMs: 150 } });
  const { session: normal } = await t.initialize();
  const response = await t.post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: INIT_PARAMS,
  });
  const lazy = response.headers.get("mcp-session-id")!;
  await messagesOf(response);
  strictEqual(t.face.size, 2);
  const third = await t.post({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS });
  strictEqual(third.status, 503, "every place is taken");
  await third.body?.cancel();
  await waitFor("the end of the session", () => t.face.size === 1, { timeoutMs: 5_000 });
  const late = await t.post({ jsonrpc: "2.0", method: "notifications/initialized" }, lazy);
  strictEqual(late.status, 404);
  await late.body?.cancel();
  ok(
    t.lines.some((l) => l.includes("did not complete its initialization in time")),
    t.lines.join(""),
  );
  // The place is free again, and the initialized session still answers.
  const { session: next } = await t.initialize();
  ok(next !== lazy);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const ping = await t.post({ jsonrpc: "2.0", id: 2, method: "ping" }, normal);
  strictEqual(ping.status, 200);
  deepStrictEqual((await messagesOf(ping))[0]?.result, {});
  strictEqual(t.face.size, 2);
});
