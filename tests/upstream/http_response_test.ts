/**
 * The HTTP link against hostile servers on 127.0.0.1, in the same process:
 * a response counts only on its own exchange, bytes on an idle connection
 * never become the next response, an HTTP/1.0 response with a chunked
 * body is refused, an error body's message reaches the failure, and the
 * POSTs of answers are bounded.
 *
 * And the bridge (`InProcessBridge`, the real wiring of the command line)
 * in front of such servers: the HTTP status of a failed request in
 * `data.detail` (with the upstream's message of a JSON-RPC error body), a
 * connection dropped mid-stream, and progress, log
 * messages, cancellation and an input round over the SSE stream of a
 * request. Each output is scanned for the URL's path and query and the
 * header values.
 */

import {
  bodyCut,
  errorMessageOf,
  isResponseOf,
  requestFailure,
} from "../../lib/upstream/http_response.ts";
import { TooLargeError } from "../../lib/http/bounded_body.ts";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { UpstreamFrame } from "../../lib/upstream/link.ts";
import { json, serveMcp, sse } from "../fixtures/http_raw.ts";
import { serveSdk } from "../fixtures/http_upstream.ts";
import { jsonResponse, serveTcp } from "../fixtures/raw_tcp.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { waitFor } from "../wait.ts";
import {
  assertNoSecret,
  call,
  errorOf,
  openLink,
  SECRET_ARGS,
  SECRET_ENV,
} from "./http_link_helpers.ts";

/** The frame of request `id`: a message with its value, or a failure with its kind. */
function frameOf(frames: UpstreamFrame[], id: number): unknown {
  for (const frame of frames) {
    if (frame.kind === "message" && (frame.value as { id?: unknown }).id === id) {
      return (frame.value as { result?: unknown; error?: unknown }).result ??
        (frame.value as { error?: unknown }).error;
    }
    if (frame.kind === "failed" && frame.id === id) return (frame.failure as UpstreamFailure).kind;
  }
  return undefined;
}

Deno.test("http exchange: a JSON body with another request's id settles neither; the other request keeps its own answer", async () => {
  let releaseB!: () => void;
  const bAnswered = new Promise<void>((resolve) => releaseB = resolve);
  await using upstream = serveMcp(async (m) => {
    if (m.id === 1) return json({ jsonrpc: "2.0", id: 2, result: { forged: true } });
    await bAnswered;
    return json({ jsonrpc: "2.0", id: 2, result: { real: true } });
  });
  const debug: string[] = [];
  const { link, frames } = await openLink(upstream.url, { debug: (line) => debug.push(line) });
  await call(link, 2);
  await call(link, 1);
  await waitFor("the failure of 1", () => frameOf(frames, 1) !== undefined);
  strictEqual(frameOf(frames, 1), "invalid_response");
  strictEqual(frameOf(frames, 2), undefined);
  releaseB();
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 2), { real: true });
  strictEqual(frames.length, 2);
  ok(debug.some((line) => line.includes("another request")), debug.join("\n"));
  await link.close();
});

Deno.test("http exchange: an SSE stream with another request's response drops it and goes on", async () => {
  let releaseB!: () => void;
  const bAnswered = new Promise<void>((resolve) => releaseB = resolve);
  await using upstream = serveMcp(async (m) => {
    if (m.id === 1) {
      return sse([
        { jsonrpc: "2.0", id: 2, result: { forged: true } },
        { jsonrpc: "2.0", id: 1, result: { one: true } },
      ]);
    }
    await bAnswered;
    return sse([{ jsonrpc: "2.0", id: 2, result: { real: true } }]);
  });
  const { link, frames } = await openLink(upstream.url);
  await call(link, 2);
  await call(link, 1);
  await waitFor("the answer of 1", () => frameOf(frames, 1) !== undefined);
  deepStrictEqual(frameOf(frames, 1), { one: true });
  strictEqual(frameOf(frames, 2), undefined);
  releaseB();
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 2), { real: true });
  strictEqual(frames.length, 2);
  await link.close();
});

Deno.test("http exchange: bytes that come on an idle connection never become the next response", async () => {
  const forged = Promise.withResolvers<void>();
  await using server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      const id = request.message?.id;
      await conn.write(jsonResponse({ jsonrpc: "2.0", id, result: { real: id } }));
      if (id === 1) {
        // A whole response that nobody asked for, on the idle connection.
        await new Promise((resolve) => setTimeout(resolve, 50));
        await conn.write(jsonResponse({ jsonrpc: "2.0", id: 2, result: { forged: true } }));
        forged.resolve();
      }
    }
  });
  const { link, frames } = await openLink(server.url);
  await call(link, 1);
  await waitFor("the answer of 1", () => frameOf(frames, 1) !== undefined);
  // The forged bytes are on the idle connection before the next request.
  await forged.promise;
  await new Promise((resolve) => setTimeout(resolve, 20));
  await call(link, 2);
  await waitFor("the answer of 2", () => frameOf(frames, 2) !== undefined);
  deepStrictEqual(frameOf(frames, 1), { real: 1 });
  deepStrictEqual(frameOf(frames, 2), { real: 2 });
  await link.close();
});

Deno.test("http exchange: an HTTP/1.0 response with Transfer-Encoding chunked is refused", async () => {
  await using server = serveTcp(async (conn) => {
    const request = await conn.read();
    if (!request) return;
    const body = JSON.stringify({ jsonrpc: "2.0", id: request.message?.id, result: { ok: 1 } });
    await conn.write(
      "HTTP/1.0 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n" +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    conn.close();
  });
  const { link, frames } = await openLink(server.url);
  await call(link, 1);
  await waitFor("the failure", () => frames.length === 1);
  strictEqual(frameOf(frames, 1), "transport_failed");
  await link.close();
});

Deno.test("http exchange: an error status with a JSON-RPC error body keeps the upstream message and the status", async () => {
  await using upstream = serveMcp((m) =>
    m.id === 1
      ? json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad\nsession" } }, 404)
      : json(
        { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } },
        400,
      )
  );
  const { link, frames } = await openLink(upstream.url);
  await call(link, 1);
  await call(link, 2);
  await waitFor("both", () => frames.length === 2);
  const failed = frames.find((f) => f.kind === "failed") as { failure: UpstreamFailure };
  strictEqual(failed.failure.kind, "transport_failed");
  strictEqual(failed.failure.status, 404);
  strictEqual(failed.failure.upstreamMessage, "Bad session");
  // A 400 with the error of the request itself is that error.
  deepStrictEqual(frameOf(frames, 2), { code: -32601, message: "Method not found" });
  await link.close();
});

Deno.test("http response: an error status with an HTML page that names a session is no sign of an older server; an SSE body of an error is not read", async () => {
  const { readRequestResponse } = await import("../../lib/upstream/http_response.ts");
  const options = {
    id: 1,
    limit: 1 << 20,
    mayRetry: false,
    deliver: () => {},
    serverRequest: () => Promise.resolve(),
  };
  const failureOf = (response: Response) =>
    readRequestResponse(response, options).then(() => undefined, (error) => error);
  const html = await failureOf(
    new Response("<html>your session expired</html>", {
      status: 404,
      headers: { "content-type": "text/html" },
    }),
  );
  strictEqual(html.status, 404);
  strictEqual(html.errorBody, undefined);
  const plain = await failureOf(
    new Response("Bad Request: No valid session ID provided", {
      status: 400,
      headers: { "content-type": "text/plain" },
    }),
  );
  strictEqual(plain.errorBody, "asks_for_session");
  // A stream that never ends: the failure comes at once, the body is cancelled.
  let cancelled = false;
  const open = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("data: {}\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const stream = await failureOf(
    new Response(open, { status: 500, headers: { "content-type": "text/event-stream" } }),
  );
  strictEqual(stream.status, 500);
  strictEqual(cancelled, true);
});

Deno.test("http: a failed request has the HTTP status in data.detail; 401/403 without a sign-in fail", async () => {
  for (const status of [404, 500, 401, 403, 502]) {
    await using upstream = serveMcp((m) =>
      m.method === "tools/call" ? new Response("no", { status }) : undefined
    );
    await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
    await bridge.initialize();
    await bridge.request(1, "tools/call", { name: "x", arguments: {} });
    const error = errorOf(await bridge.response(1));
    deepStrictEqual(error.data, { cause: "transport_failed", detail: `HTTP status ${status}` });
    strictEqual(await bridge.exit(), 0);
    assertNoSecret(bridge.stdout + bridge.stderr);
    // The header of --header-env reached the server.
    strictEqual(upstream.seen[0]!.headers.get("authorization"), SECRET_ENV.TEST_TOKEN);
  }
});

Deno.test("http: server/discover with a 404 gives discover_failed with the status", async () => {
  await using upstream = serveMcp(() => new Response("gone", { status: 404 }));
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  const init = await bridge.initialize();
  const error = errorOf(init);
  deepStrictEqual(error.data, { cause: "discover_failed", detail: "HTTP status 404" });
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

Deno.test("http: a server that drops the connection mid-stream fails the request with transport_failed", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method !== "tools/call") return undefined;
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: {
        progressToken: (m.params?._meta as { progressToken: unknown }).progressToken,
        progress: 1,
      },
    };
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) {
          sent = true;
          controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(progress)}\n\n`));
          return;
        }
        controller.error(new Error("dropped"));
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  await using bridge = new InProcessBridge(SECRET_ARGS, upstream.url, { env: SECRET_ENV });
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "x", arguments: {}, _meta: { progressToken: 7 } });
  deepStrictEqual(errorOf(await bridge.response(1)).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  ok(bridge.queued.some((m) => m.method === "notifications/progress"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr);
});

/** The secrets of the URL of the SDK upstream (it has no header of ours). */
const URL_SECRETS = ["secret-path", "sekrit-query"];

Deno.test("http: progress, logging and cancellation over SSE", async () => {
  await using upstream = serveSdk();
  await using bridge = new InProcessBridge([], upstream.url);
  await bridge.initialize({});
  await bridge.request("lvl", "logging/setLevel", { level: "debug" });
  await bridge.response("lvl");
  await bridge.request(1, "tools/call", {
    name: "flood",
    arguments: { count: 5 },
    _meta: { progressToken: "tok" },
  });
  const result = await bridge.response(1);
  deepStrictEqual(result.result, { content: [{ type: "text", text: "flooded 5" }] });
  const progress = bridge.queued.filter((m) => m.method === "notifications/progress");
  deepStrictEqual(
    progress.map((m) => (m.params as { progress: number }).progress),
    [1, 2, 3, 4, 5],
  );
  ok(progress.every((m) => (m.params as { progressToken: string }).progressToken === "tok"));

  await bridge.request(2, "tools/call", { name: "log", arguments: { level: "warning" } });
  await bridge.response(2);
  const log = await bridge.take((m) => m.method === "notifications/message");
  deepStrictEqual((log?.params as { data: unknown }).data, { note: "hello" });

  // A cancelled call gets no response, and its POST is aborted.
  await bridge.request(3, "tools/call", { name: "slow", arguments: { ms: 5000 } });
  const deadline = Date.now() + 5000;
  while (!upstream.seen.some((r) => r.body.includes('"slow"')) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 3, reason: "user" },
  });
  await bridge.request(4, "ping", {});
  await bridge.response(4);
  const cancel = await waitFor(
    "the cancellation at the server",
    () => upstream.seen.find((r) => r.body.includes('"notifications/cancelled"')),
    { intervalMs: 10 },
  ).catch(() => undefined);
  ok(cancel, "the cancellation reached the server as its own POST");
  // An answer of the bridge itself to the cancel would have come before the ping's. The
  // server (in this process) ends the slow tool as it handles the cancel, which it has
  // received: its answer, had the POST not been aborted, would follow within milliseconds.
  strictEqual(await bridge.take((m) => m.id === 3, 50), null);
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge.stdout + bridge.stderr, URL_SECRETS);
});

Deno.test("http: an input round (elicitation) through the bridge", async () => {
  await using upstream = serveSdk();
  await using bridge = new InProcessBridge([], upstream.url);
  await bridge.initialize({ elicitation: { form: {} } });
  await bridge.request(1, "tools/call", { name: "ask", arguments: {} });
  const question = await bridge.take((m) => m.method === "elicitation/create");
  ok(question, `no question; stderr:\n${bridge.stderr}`);
  await bridge.send({
    jsonrpc: "2.0",
    id: question.id,
    result: { action: "accept", content: { name: "Ada" } },
  });
  const result = (await bridge.response(1)).result as { content: { text: string }[] };
  deepStrictEqual(JSON.parse(result.content[0]!.text), { name: "Ada" });
  strictEqual(await bridge.exit(), 0);
});

Deno.test("http: an error status whose body is a JSON-RPC error has the upstream message and the status in data.detail", async () => {
  await using upstream = serveMcp((m) =>
    m.method === "tools/call"
      ? json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Session expired" } }, 404)
      : undefined
  );
  await using bridge = new InProcessBridge([], upstream.url);
  ok("result" in await bridge.initialize(), bridge.stderr);
  await bridge.request(1, "tools/call", { name: "x", arguments: {} });
  deepStrictEqual(errorOf(await bridge.response(1)).data, {
    cause: "transport_failed",
    detail: "Session expired (HTTP status 404)",
  });
  strictEqual(await bridge.exit(), 0);
});

Deno.test("isResponseOf: a response of its own id only", () => {
  ok(isResponseOf({ jsonrpc: "2.0", id: 1, result: {} }, 1));
  ok(!isResponseOf({ jsonrpc: "2.0", id: 2, result: {} }, 1));
});

Deno.test("errorMessageOf: the message of an error body on one line", () => {
  const error = { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad\nsession" } };
  strictEqual(errorMessageOf(error), "Bad session");
});

Deno.test("bodyCut: a body that the connection cut or a stream that ended is a cut; a status, a body not valid or too large, the sign-in are not", () => {
  const ended = new UpstreamFailure("transport_failed", {
    transport: "the stream ended before its response",
  });
  deepStrictEqual(
    [
      bodyCut(new TypeError("error reading a body from connection")),
      bodyCut(ended),
      bodyCut(new UpstreamFailure("invalid_response")),
      bodyCut(new UpstreamFailure("transport_failed", { status: 502 })),
      bodyCut(new UpstreamFailure("sign_in", { status: 401 })),
      bodyCut(new TooLargeError(10)),
    ],
    [
      "the connection failed during the body of the response",
      "the stream ended before its response",
      undefined,
      undefined,
      undefined,
      undefined,
    ],
  );
  // The failure names the status of the head, and what the transport saw.
  const cut = requestFailure(new TypeError("error reading a body from connection"), 200);
  deepStrictEqual([cut.kind, cut.status, cut.transport], [
    "transport_failed",
    200,
    "the connection failed during the body of the response",
  ]);
  const over = requestFailure(new TooLargeError(10), 200);
  deepStrictEqual([over.kind, over.status], ["invalid_response", 200]);
  const withStatus = requestFailure(ended, 200);
  deepStrictEqual([withStatus.status, withStatus.transport], [200, ended.transport]);
  strictEqual(requestFailure(new TypeError("fetch failed"), undefined).status, undefined);
});

Deno.test("http exchange: a 503 whose body the network cuts fails a repeatable request once with its status; it is not sent again", async () => {
  let posts = 0;
  await using server = serveTcp(async (conn) => {
    const request = await conn.read();
    if (!request) return;
    posts++;
    await conn.write(
      "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n" +
        'content-length: 500\r\n\r\n{"jsonrpc":',
    );
    conn.close(); // the body is cut
  });
  const debug: string[] = [];
  const { link, frames } = await openLink(server.url, { debug: (line) => debug.push(line) });
  await link.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  await waitFor("the failure", () => frames.length === 1);
  const failed = frames[0] as { kind: string; failure: UpstreamFailure };
  strictEqual(failed.kind, "failed");
  strictEqual(failed.failure.status, 503);
  strictEqual(posts, 1, debug.join("\n"));
  await link.close();
});
