/**
 * The real bridge in front of raw HTTP upstreams on 127.0.0.1: HTTP
 * statuses, byte limits, bodies that are not valid, silence and dropped
 * connections. Every byte of stdout and stderr is scanned for the URL path,
 * the query and the header values.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { UrlBridge } from "../fixtures/http_bridge.ts";
import { json, type RawMessage, result, serveMcp, serveSilent, sse } from "../fixtures/http_raw.ts";

const SECRETS = ["secret-path", "sekrit-query", "header-value-s3cr3t"];

function assertNoSecret(bridge: UrlBridge): void {
  const all = bridge.stdout + bridge.stderr;
  for (const secret of SECRETS) ok(!all.includes(secret), `the output holds ${secret}:\n${all}`);
}

const ENV = { TEST_TOKEN: "Bearer header-value-s3cr3t" };
const ARGS = ["--log-level", "debug", "--header-env", "Authorization=TEST_TOKEN"];

/** The data of an error response. */
function errorOf(msg: Record<string, unknown>): { code: number; data?: Record<string, unknown> } {
  ok("error" in msg, JSON.stringify(msg));
  return msg.error as { code: number; data?: Record<string, unknown> };
}

Deno.test("http: a failed request has the HTTP status in data.detail; 401/403 without a sign-in fail", async () => {
  for (const status of [404, 500, 401, 403, 502]) {
    await using upstream = serveMcp((m) =>
      m.method === "tools/call" ? new Response("no", { status }) : undefined
    );
    await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
    await bridge.initialize();
    await bridge.request(1, "tools/call", { name: "x", arguments: {} });
    const error = errorOf(await bridge.response(1));
    deepStrictEqual(error.data, { cause: "transport_failed", detail: `HTTP status ${status}` });
    strictEqual(await bridge.exit(), 0);
    assertNoSecret(bridge);
    // The header of --header-env reached the server.
    strictEqual(upstream.seen[0]!.headers.get("authorization"), ENV.TEST_TOKEN);
  }
});

Deno.test("http: server/discover with a 404 gives discover_failed with the status", async () => {
  await using upstream = serveMcp(() => new Response("gone", { status: 404 }));
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  const init = await bridge.initialize();
  const error = errorOf(init);
  deepStrictEqual(error.data, { cause: "discover_failed", detail: "HTTP status 404" });
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: a JSON response of limit + 1 bytes and an SSE event over the limit fail with invalid_response", async () => {
  const limit = 2000;
  // A result whose body has exactly `bytes` bytes.
  const body = (m: RawMessage, bytes: number) => {
    const empty = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [], pad: "" } });
    return JSON.stringify({
      jsonrpc: "2.0",
      id: m.id,
      result: { content: [], pad: "x".repeat(bytes - empty.length) },
    });
  };
  await using upstream = serveMcp((m) => {
    const args = (m.params?.arguments ?? {}) as { mode?: string };
    if (m.method !== "tools/call") return undefined;
    const headers = { "content-type": "application/json" };
    switch (args.mode) {
      case "exact":
        return new Response(body(m, limit), { headers });
      case "over":
        return new Response(body(m, limit + 1), { headers });
      case "over-chunked":
        // No Content-Length: the bridge counts the bytes as they come.
        return new Response(ReadableStream.from([new TextEncoder().encode(body(m, limit + 1))]), {
          headers,
        });
      case "sse-over":
        return new Response(`event: message\ndata: ${body(m, limit + 1)}\n\n`, {
          headers: { "content-type": "text/event-stream" },
        });
      case "sse-exact":
        return new Response(
          `: keepalive\r\nevent: message\r\ndata: ${body(m, limit)}\r\n\r\n`,
          { headers: { "content-type": "text/event-stream" } },
        );
    }
  });
  await using bridge = new UrlBridge([
    ...ARGS,
    "--max-response-bytes",
    String(limit),
    upstream.url,
  ], ENV);
  await bridge.initialize();
  const call = async (id: number, mode: string) => {
    await bridge.request(id, "tools/call", { name: "x", arguments: { mode } });
    return await bridge.response(id);
  };
  ok("result" in await call(1, "exact"));
  deepStrictEqual(errorOf(await call(2, "over")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual(errorOf(await call(3, "over-chunked")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual(errorOf(await call(4, "sse-over")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  ok("result" in await call(5, "sse-exact"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: a body that is not valid JSON, a 2xx that is not JSON or SSE, a 400 with the JSON-RPC error", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method !== "tools/call") return undefined;
    const mode = (m.params?.arguments as { mode: string }).mode;
    if (mode === "bad-json") {
      return new Response("{not json", { headers: { "content-type": "application/json" } });
    }
    if (mode === "deep") {
      const deep = "[".repeat(3000) + "]".repeat(3000);
      return new Response(`{"jsonrpc":"2.0","id":${m.id},"result":{"x":${deep}}}`, {
        headers: { "content-type": "application/json" },
      });
    }
    if (mode === "html") {
      return new Response("<html>", { headers: { "content-type": "text/html" } });
    }
    if (mode === "accepted") return new Response(null, { status: 202 });
    if (mode === "bad-event") {
      return new Response("data: {broken\n\n", {
        headers: { "content-type": "text/event-stream" },
      });
    }
    return json({
      jsonrpc: "2.0",
      id: m.id,
      error: { code: -32020, message: "header mismatch" },
    }, 400);
  });
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  const call = async (id: number, mode: string) => {
    await bridge.request(id, "tools/call", { name: "x", arguments: { mode } });
    return errorOf(await bridge.response(id));
  };
  deepStrictEqual((await call(1, "bad-json")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual((await call(2, "html")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  deepStrictEqual((await call(3, "accepted")).data, {
    cause: "invalid_response",
    detail: "HTTP status 202",
  });
  // An event without a message: the stream ends before the response.
  deepStrictEqual((await call(4, "bad-event")).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  deepStrictEqual(await call(5, "rpc-400"), { code: -32020, message: "header mismatch" });
  // Deeper than the nesting limit of the upstream: the bridge could not write it.
  deepStrictEqual((await call(6, "deep")).data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
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
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "x", arguments: {}, _meta: { progressToken: 7 } });
  deepStrictEqual(errorOf(await bridge.response(1)).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  ok(bridge.queued.some((m) => m.method === "notifications/progress"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: a server that never answers: the time limit of server/discover, and the POST is aborted", async () => {
  await using upstream = serveSilent();
  await using bridge = new UrlBridge(["--discover-timeout", "0.3", ...ARGS, upstream.url], ENV);
  const error = errorOf(await bridge.initialize());
  deepStrictEqual(error.data, { cause: "discover_failed", detail: "no response in 300 ms" });
  // The cancellation is its own POST, and the connection of the request closes.
  const deadline = Date.now() + 5000;
  while (
    (upstream.closedUnanswered === 0 ||
      !upstream.requests.some((r) => r.includes('"notifications/cancelled"'))) &&
    Date.now() < deadline
  ) await new Promise((r) => setTimeout(r, 10));
  strictEqual(upstream.closedUnanswered, 1);
  ok(upstream.requests.some((r) => r.includes('"notifications/cancelled"')));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: each status row of the listen table", async () => {
  const rows: [number, "retry" | "stop"][] = [
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
    [501, "stop"],
    [401, "stop"],
    [403, "stop"],
    [404, "stop"],
    [400, "stop"],
  ];
  await Promise.all(rows.map(async ([status, row]) => {
    let listens = 0;
    await using upstream = serveMcp((m) => {
      if (m.method !== "subscriptions/listen") return undefined;
      listens++;
      return new Response("no", { status });
    }, { tools: { listChanged: true } });
    await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
    await bridge.initialize();
    await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const first = Date.now() + 10_000;
    while (Date.now() < first && listens < 1) await new Promise((r) => setTimeout(r, 20));
    // The first wait is 0.5 s: a retry row has its second stream soon after;
    // a stop row has none in three times that wait.
    const deadline = Date.now() + (row === "retry" ? 10_000 : 1500);
    while (Date.now() < deadline && listens < 2) await new Promise((r) => setTimeout(r, 20));
    strictEqual(listens, row === "retry" ? 2 : 1, `status ${status}`);
    strictEqual(await bridge.exit(), 0);
    assertNoSecret(bridge);
    if (status === 401 || status === 403) {
      ok(bridge.stderr.includes("was refused; the next change opens a new one"), bridge.stderr);
    }
  }));
});

Deno.test("http: a listen stream over SSE gives the events; a notification POST gets 202", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method !== "subscriptions/listen") return undefined;
    const meta = { "io.modelcontextprotocol/subscriptionId": m.id };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const enc = new TextEncoder();
        const event = (msg: unknown) =>
          controller.enqueue(enc.encode(`event: message\ndata: ${JSON.stringify(msg)}\n\n`));
        event({
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: { _meta: meta },
        });
        event({
          jsonrpc: "2.0",
          method: "notifications/tools/list_changed",
          params: { _meta: meta },
        });
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, { tools: { listChanged: true } });
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // One for the gap at the first acknowledgment, one for the event.
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  ok(await bridge.take((m) => m.method === "notifications/tools/list_changed"));
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: tools/call of a tool with x-mcp-header gets the Mcp-Param headers", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method === "tools/list") {
      return result(m, {
        tools: [{
          name: "route",
          inputSchema: {
            type: "object",
            properties: {
              region: { type: "string", "x-mcp-header": "Region" },
              n: { type: "integer", "x-mcp-header": "Count" },
              deep: {
                type: "object",
                properties: { flag: { type: "boolean", "x-mcp-header": "Flag" } },
              },
            },
          },
        }],
      });
    }
    if (m.method === "tools/call") {
      return sse([{ jsonrpc: "2.0", id: m.id, result: { content: [] } }]);
    }
  });
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/list");
  await bridge.response(1);
  await bridge.request(2, "tools/call", {
    name: "route",
    arguments: { region: "eu west", n: 3, deep: { flag: true } },
  });
  deepStrictEqual((await bridge.response(2)).result, { content: [] });
  const call = upstream.seen.find((r) => r.headers.get("mcp-method") === "tools/call")!;
  strictEqual(call.headers.get("mcp-name"), "route");
  strictEqual(call.headers.get("mcp-param-region"), "eu west");
  strictEqual(call.headers.get("mcp-param-count"), "3");
  strictEqual(call.headers.get("mcp-param-flag"), "true");
  strictEqual(await bridge.exit(), 0);
});

Deno.test("http: a 307 within the origin is followed; a redirect to another origin is not", async () => {
  await using other = serveMcp(() => undefined);
  await using upstream = serveMcp((m, request) => {
    if (m.method !== "tools/call") return undefined;
    const where = (m.params?.arguments as { where: string }).where;
    if (new URL(request.url).pathname === "/moved") {
      return result(m, { content: [{ type: "text", text: "moved here" }] });
    }
    const location = where === "same" ? "/moved" : other.url;
    return new Response(null, { status: 307, headers: { location } });
  });
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "x", arguments: { where: "same" } });
  deepStrictEqual((await bridge.response(1)).result, {
    content: [{ type: "text", text: "moved here" }],
  });
  const moved = upstream.seen.at(-1)!;
  strictEqual(moved.headers.get("authorization"), ENV.TEST_TOKEN);
  await bridge.request(2, "tools/call", { name: "x", arguments: { where: "other" } });
  deepStrictEqual(errorOf(await bridge.response(2)).data, {
    cause: "transport_failed",
    detail: "HTTP status 307",
  });
  strictEqual(other.seen.length, 0, "the other origin got nothing");
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});

Deno.test("http: a large JSON body of a known length comes whole; one that stops before its Content-Length is transport_failed", async () => {
  const text = "QUJD".repeat(512 * 1024); // 2 MiB: read in place, into a buffer of its length
  await using upstream = serveMcp((m) => {
    if (m.method !== "tools/call") return undefined;
    const body = new TextEncoder().encode(JSON.stringify({
      jsonrpc: "2.0",
      id: m.id,
      result: { resultType: "complete", content: [{ type: "text", text }] },
    }));
    const name = (m.params as { name?: string }).name;
    const headers = { "content-type": "application/json", "content-length": String(body.length) };
    if (name === "whole") return new Response(body, { headers });
    // The same Content-Length, and the connection drops after half of the body.
    let sent = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new Error("dropped"));
        sent = true;
        controller.enqueue(body.subarray(0, body.length >> 1));
      },
    });
    return new Response(stream, { headers });
  });
  await using bridge = new UrlBridge([...ARGS, upstream.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "whole", arguments: {} });
  const whole = await bridge.response(1);
  strictEqual((whole.result as { content: { text: string }[] }).content[0]!.text, text);
  await bridge.request(2, "tools/call", { name: "cut", arguments: {} });
  deepStrictEqual(errorOf(await bridge.response(2)).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  strictEqual(await bridge.exit(), 0);
  assertNoSecret(bridge);
});
