/**
 * `serve` as a black box, its transport: the real program over raw HTTP
 * (`serve_raw.ts`), checked against the Streamable HTTP transport of
 * revision 2025-11-25 and the rules of issue 39 that the other serve tests
 * do not reach: the status of each refusal and its body, batches and bodies
 * that are no message, 202 with no body and 400 for a response that cannot
 * be taken, the GET stream (one at a time, no response on it), DELETE, the
 * session id of another replica, Origin and Host, the token, a body over its
 * limit, --max-sessions, and what passes during the grace of SIGTERM.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { waitFor, within } from "../wait.ts";
import { runBridge } from "./helpers.ts";
import { CONFORMANCE_UPSTREAM, ServeProcess } from "./serve_helpers.ts";
import {
  BOTH,
  call,
  Events,
  INITIALIZE,
  initialize,
  messagesOf,
  type Obj,
  rawHttp,
  refused,
  type Send,
  send,
  textOf,
} from "./serve_raw.ts";

Deno.test("serve black box: the refusals of the transport: 406, 415, 400, 404, 405, each with a JSON-RPC error without an id; the session still works", async () => {
  await using serve = await ServeProcess.start(["--replica", "r1", "--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  ok(session.startsWith("r1."), session);
  const ping = { jsonrpc: "2.0", id: 7, method: "ping" };
  // Accept must list both types (a POST), text/event-stream (a GET).
  // (fetch adds "Accept: */*" to a request without one: the raw socket below sends none.)
  for (const accept of ["application/json", "text/event-stream", "text/html"]) {
    await refused(await send(serve, { session, body: ping, headers: { accept } }), 406);
  }
  await refused(
    await send(serve, { session, method: "GET", headers: { accept: "application/json" } }),
    406,
  );
  // Media ranges, parameters and letter case as HTTP allows them pass.
  for (
    const accept of [
      "*/*",
      "application/*, text/*",
      "Application/JSON;q=0.9, Text/Event-Stream;q=0.8",
      "text/event-stream;charset=utf-8,application/json",
    ]
  ) {
    const pong = await send(serve, { session, body: { ...ping, id: 9 }, headers: { accept } });
    deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 9, result: {} }], accept);
  }
  for (const type of ["application/json; charset=utf-8", "Application/JSON"]) {
    const pong = await send(serve, {
      session,
      body: { ...ping, id: 9 },
      headers: { "content-type": type },
    });
    deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 9, result: {} }], type);
  }
  const host = `host: 127.0.0.1:${serve.port}`;
  const noAccept = await rawHttp(serve, [
    "POST /mcp HTTP/1.1",
    host,
    "content-type: application/json",
    `mcp-session-id: ${session}`,
  ], JSON.stringify(ping));
  strictEqual(noAccept.status, 406, noAccept.body);
  strictEqual(JSON.parse(noAccept.body).id, null);
  const getNoAccept = await rawHttp(serve, [
    "GET /mcp HTTP/1.1",
    host,
    `mcp-session-id: ${session}`,
  ]);
  strictEqual(getNoAccept.status, 406, getNoAccept.body);
  // The body must be application/json.
  for (const type of [null, "text/plain", "application/x-www-form-urlencoded"]) {
    await refused(
      await send(serve, { session, body: ping, headers: { "content-type": type } }),
      415,
    );
  }
  // A request that is not initialize needs the session id; GET and DELETE too.
  await refused(await send(serve, { body: ping }), 400);
  await refused(await send(serve, { method: "GET" }), 400);
  await refused(await send(serve, { method: "DELETE" }), 400);
  // A session that never was, or of another replica (the random part of this one): 404,
  // for every method, and for an initialize that names it.
  const other = `r2.${session.slice(3)}`;
  for (const id of [other, "r1.nosuchsession", session.slice(3)]) {
    await refused(await send(serve, { session: id, body: ping }), 404);
    await refused(await send(serve, { session: id, method: "GET" }), 404);
    await refused(await send(serve, { session: id, method: "DELETE" }), 404);
    await refused(await send(serve, { session: id, body: INITIALIZE }), 404);
  }
  // An MCP-Protocol-Version that the server does not support: 400.
  for (const version of ["2099-01-01", "garbage"]) {
    const headers = { "mcp-protocol-version": version };
    await refused(await send(serve, { session, body: ping, headers }), 400);
    await refused(await send(serve, { session, method: "GET", headers }), 400);
  }
  // Another method: 405 with Allow; another path: 404.
  const put = await send(serve, { method: "PUT", session, body: ping });
  await refused(put, 405);
  ok(put.headers.get("allow")?.includes("POST"), put.headers.get("allow") ?? "no Allow");
  const elsewhere = await send(serve, { path: "/other/mcp", session, body: ping });
  strictEqual(elsewhere.status, 404);
  await elsewhere.body?.cancel();
  // A client of both revisions probes with server/discover and its own revision's header, no
  // session: -32601, so that it falls back to initialize (not a 400 that it cannot read).
  const discover = await send(serve, {
    body: { jsonrpc: "2.0", id: 8, method: "server/discover", params: {} },
    headers: { "mcp-protocol-version": "2026-07-28" },
  });
  strictEqual(discover.status, 200);
  strictEqual(((await messagesOf(discover))[0]?.error as Obj).code, -32601);
  // The session is untouched: a request with an older revision it supports still works.
  const pong = await send(serve, {
    session,
    body: ping,
    headers: { "mcp-protocol-version": "2025-06-18" },
  });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 7, result: {} }]);
});

Deno.test("serve black box: a JSON-RPC batch (an array, which revision 2025-11-25 has not) is refused with an error, with or without a session, as are bodies that are no message; serve goes on", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  // Without a session: a batch that holds an initialize starts no session.
  const first = await send(serve, { body: [INITIALIZE] });
  strictEqual(first.headers.get("mcp-session-id"), null);
  const error = await refused(first, 400);
  strictEqual(error.code, -32600);
  const session = await initialize(serve);
  for (
    const batch of [
      [{ jsonrpc: "2.0", id: 2, method: "ping" }, { jsonrpc: "2.0", id: 3, method: "ping" }],
      [{ jsonrpc: "2.0", method: "notifications/initialized" }],
      [],
    ]
  ) {
    strictEqual((await refused(await send(serve, { session, body: batch }), 400)).code, -32600);
  }
  // Other bodies that are no message: JSON that is not an object, and bytes that are not UTF-8.
  for (const body of ["null", "42", '"ping"', "{}", '{"jsonrpc":"2.0"}']) {
    strictEqual((await refused(await send(serve, { session, body }), 400)).code, -32600, body);
  }
  const latin1 = await fetch(serve.url(), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: BOTH,
      "mcp-session-id": session,
    },
    body: new Uint8Array([0x7b, 0x22, 0xe9, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
  });
  strictEqual((await refused(latin1, 400)).code, -32700);
  const pong = await send(serve, { session, body: { jsonrpc: "2.0", id: 4, method: "ping" } });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 4, result: {} }]);
  const init = await send(serve, { body: INITIALIZE });
  strictEqual(init.status, 200);
  await init.body?.cancel();
});

Deno.test("serve black box: a notification, a cancellation and a client's response each get 202 with no body; a body that is not JSON 400 with -32700", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  for (
    const body of [
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
      { jsonrpc: "2.0", id: "b-1", result: {} },
    ]
  ) {
    const response = await send(serve, { session, body });
    strictEqual(response.status, 202, JSON.stringify(body));
    strictEqual(await response.text(), "", JSON.stringify(body));
    strictEqual(response.headers.get("content-type"), null);
  }
  const parse = await refused(
    await send(serve, { session, body: '{"jsonrpc": "2.0", "id": ' }),
    400,
  );
  strictEqual(parse.code, -32700);
});

Deno.test("serve black box: the GET stream: a newer one takes the place of the older (one stream a message, never both); a response whose POST went is dropped, not sent on it, and its request is not canceled", async () => {
  await using serve = await ServeProcess.start([
    "--log-level",
    "debug",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const session = await initialize(serve);
  const older = new Events(await send(serve, { session, method: "GET" }));
  const newer = new Events(await send(serve, { session, method: "GET" }));
  await within(older.done, 5_000, "the end of the older GET stream");
  const subscribe = await send(serve, {
    session,
    body: { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "test://x" } },
  });
  deepStrictEqual((await messagesOf(subscribe))[0]?.result, {});
  const touch = await send(serve, { session, body: call(3, "touch", { uri: "test://x" }) });
  strictEqual(textOf((await messagesOf(touch)).at(-1)), "touched");
  await newer.next("the update", (m) => m.method === "notifications/resources/updated");
  // What waited for a GET stream went to the first one only; the update to the newer only.
  const methods = (events: Events) => events.seen.map((m) => String(m.method));
  ok(
    methods(older).every((method) => !methods(newer).includes(method)),
    `sent on both: ${methods(older)} / ${methods(newer)}`,
  );
  // A call whose client drops its POST connection: the call runs on upstream (a lost
  // connection is no cancellation) and its response goes nowhere, not on the GET stream.
  const gone = new AbortController();
  const slow = send(serve, { session, body: call(4, "slow", { ms: 600 }), signal: gone.signal });
  const response = await slow;
  strictEqual(response.status, 200);
  gone.abort();
  await waitFor(
    "the dropped response",
    () => /dropped a response: the client closed the connection/.test(serve.stderr),
  );
  ok(!/slow canceled/.test(serve.stderr), serve.stderr);
  ok(!newer.seen.some((m) => "result" in m || "error" in m), JSON.stringify(newer.seen));
  // The session goes on.
  const pong = await send(serve, { session, body: { jsonrpc: "2.0", id: 5, method: "ping" } });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 5, result: {} }]);
});

Deno.test("serve black box: DELETE ends the session: its GET stream and the streams of its requests end, the requests are canceled upstream, and every later request of it gets 404", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  const other = await initialize(serve, "other");
  const get = new Events(await send(serve, { session, method: "GET" }));
  const slow = new Events(await send(serve, { session, body: call(2, "slow", { ms: 30_000 }) }));
  // The headers of a call's stream come once the bridge took it.
  const otherSlow = await send(serve, { session: other, body: call(2, "slow", { ms: 300 }) });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const deleted = await send(serve, { session, method: "DELETE" });
  ok(deleted.status >= 200 && deleted.status < 300, `DELETE: ${deleted.status}`);
  await deleted.body?.cancel();
  await within(get.done, 5_000, "the end of the GET stream");
  await within(slow.done, 5_000, "the end of the call's stream");
  deepStrictEqual(slow.seen, []);
  await waitFor("the cancellation upstream", () => /slow canceled/.test(serve.stderr));
  await refused(
    await send(serve, { session, body: { jsonrpc: "2.0", id: 3, method: "ping" } }),
    404,
  );
  await refused(await send(serve, { session, method: "GET" }), 404);
  await refused(await send(serve, { session, method: "DELETE" }), 404);
  // The other session's request with the same id was not touched.
  strictEqual(textOf((await messagesOf(otherSlow)).at(-1)), "slow done");
});

Deno.test("serve black box: Origin and Host (DNS rebinding): null, another host, another port or scheme get 403, also for a preflight; the server's own origin and --allow-origin pass with CORS", async () => {
  await using serve = await ServeProcess.start([
    "--allow-origin",
    "https://app.example",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const port = serve.port;
  const body = INITIALIZE;
  for (
    const origin of [
      "null",
      "http://evil.example",
      `http://localhost:${port + 1}`,
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1.evil.example:${port}`,
      "https://app.example.evil",
      "not a url",
    ]
  ) {
    const response = await send(serve, { body, headers: { origin } });
    strictEqual(response.headers.get("mcp-session-id"), null, origin);
    await refused(response, 403);
    const preflight = await send(serve, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });
    strictEqual(preflight.status, 403, origin);
    strictEqual(preflight.headers.get("access-control-allow-origin"), null, origin);
    await preflight.body?.cancel();
  }
  for (
    const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, "https://app.example"]
  ) {
    const preflight = await send(serve, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });
    strictEqual(preflight.status, 204, origin);
    strictEqual(preflight.headers.get("access-control-allow-origin"), origin);
    ok(preflight.headers.get("access-control-allow-headers")?.includes("mcp-session-id"));
    const response = await send(serve, { body, headers: { origin } });
    strictEqual(response.status, 200, origin);
    strictEqual(response.headers.get("access-control-allow-origin"), origin);
    ok(response.headers.get("access-control-expose-headers")?.includes("mcp-session-id"));
    await response.body?.cancel();
  }
  // A page whose name resolves to 127.0.0.1 (DNS rebinding) is same-origin for its browser:
  // no Origin, its own name in Host.
  for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1.nip.io:${port}`]) {
    const raw = await rawHttp(serve, [
      "POST /mcp HTTP/1.1",
      `host: ${host}`,
      "content-type: application/json",
      `accept: ${BOTH}`,
    ], JSON.stringify(INITIALIZE));
    strictEqual(raw.status, 403, host);
    ok(!raw.head.includes("mcp-session-id"), raw.head);
  }
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, "localhost"]) {
    const raw = await rawHttp(serve, [
      "POST /mcp HTTP/1.1",
      `host: ${host}`,
      "content-type: application/json",
      `accept: ${BOTH}`,
    ], JSON.stringify(INITIALIZE));
    strictEqual(raw.status, 200, host);
  }
});

Deno.test("serve black box: --token-env: a wrong token of the same length, a prefix, a longer one, another scheme get 401 before any session check; the scheme's case does not matter; a page of an allowed origin can read its 401 (CORS); the token is never in the log", async () => {
  const token = "s3cret-T0ken-of-the-test-0123456789";
  await using serve = await ServeProcess.start([
    "--token-env",
    "SERVE_TOKEN",
    "--allow-origin",
    "https://app.example",
    "--log-level",
    "debug",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ], { SERVE_TOKEN: token });
  const wrong = [
    null,
    `Bearer ${token.slice(0, -1)}X`,
    `Bearer ${token.slice(0, -1)}`,
    `Bearer ${token}0`,
    `Bearer ${token.toUpperCase()}`,
    `Basic ${btoa(`user:${token}`)}`,
    token,
    `Bearer ${token} ${token}`,
    "Bearer",
  ];
  for (const authorization of wrong) {
    for (const session of [undefined, "nosuchsession"]) {
      const response = await send(serve, {
        body: INITIALIZE,
        ...(session && { session }),
        headers: { authorization },
      });
      strictEqual(response.headers.get("mcp-session-id"), null);
      ok(response.headers.get("www-authenticate")?.startsWith("Bearer"), authorization ?? "none");
      const error = await refused(response, 401);
      ok(!JSON.stringify(error).includes(token));
    }
  }
  for (const scheme of ["Bearer", "bearer", "BEARER"]) {
    const response = await send(serve, {
      body: INITIALIZE,
      headers: { authorization: `${scheme} ${token}` },
    });
    strictEqual(response.status, 200, scheme);
    await response.body?.cancel();
  }
  // A page of an allowed origin can read its 401 and its WWW-Authenticate (CORS), and its
  // preflight needs no token; a page of another origin gets 403 first.
  const page = await send(serve, { body: INITIALIZE, headers: { origin: "https://app.example" } });
  strictEqual(page.status, 401);
  strictEqual(page.headers.get("access-control-allow-origin"), "https://app.example");
  ok(page.headers.get("access-control-expose-headers")?.includes("www-authenticate"));
  await page.body?.cancel();
  const preflight = await send(serve, {
    method: "OPTIONS",
    headers: { origin: "https://app.example", "access-control-request-method": "POST" },
  });
  strictEqual(preflight.status, 204);
  await preflight.body?.cancel();
  const evil = await send(serve, { body: INITIALIZE, headers: { origin: "https://evil.example" } });
  strictEqual(evil.status, 403);
  strictEqual(evil.headers.get("access-control-allow-origin"), null);
  await evil.body?.cancel();
  ok(!serve.stderr.includes(token), "the token is in the log");
  ok(!serve.stderr.includes(token.slice(0, 12)), "a part of the token is in the log");
});

Deno.test("serve black box: a body over --max-line-bytes: a request gets line_too_long with its id, a notification 400, an initialize starts no session; the session and serve go on", async () => {
  await using serve = await ServeProcess.start([
    "--max-line-bytes",
    "2048",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const session = await initialize(serve);
  const pad = "x".repeat(64 * 1024);
  const big = await send(serve, { session, body: call(9, "say", { note: pad }) });
  const [answer] = await messagesOf(big);
  strictEqual(big.status, 200);
  strictEqual(answer?.id, 9);
  strictEqual((answer?.error as { data?: { cause?: string } }).data?.cause, "line_too_long");
  const note = await send(serve, {
    session,
    body: { jsonrpc: "2.0", method: "notifications/progress", params: { pad } },
  });
  strictEqual((await refused(note, 400)).code, -32600);
  const init = structuredClone(INITIALIZE) as Obj;
  (init.params as Obj).pad = pad;
  const tooLongInit = await send(serve, { body: init });
  strictEqual(tooLongInit.headers.get("mcp-session-id"), null);
  strictEqual((await messagesOf(tooLongInit))[0]?.id, 1);
  const pong = await send(serve, { session, body: { jsonrpc: "2.0", id: 10, method: "ping" } });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 10, result: {} }]);
});

Deno.test("serve black box: --max-sessions 2: an initialize refused at once names no session and holds no place; a third initialize gets 503 with Retry-After; once a session ends, a new one starts", async () => {
  await using serve = await ServeProcess.start([
    "--max-sessions",
    "2",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  for (const params of [{}, { protocolVersion: 5 }, { ...INITIALIZE.params, capabilities: 1 }]) {
    const bad = await send(serve, { body: { ...INITIALIZE, params } });
    strictEqual(bad.headers.get("mcp-session-id"), null, JSON.stringify(params));
    const [answer] = await messagesOf(bad);
    strictEqual((answer?.error as Obj | undefined)?.code, -32602, JSON.stringify(answer));
  }
  const first = await initialize(serve);
  await initialize(serve);
  const third = await send(serve, { body: INITIALIZE });
  ok(third.headers.get("retry-after"), "no Retry-After");
  strictEqual(third.headers.get("mcp-session-id"), null);
  await refused(third, 503);
  const deleted = await send(serve, { session: first, method: "DELETE" });
  await deleted.body?.cancel();
  await initialize(serve);
});

Deno.test("serve black box: a POST of a response that the server cannot accept (not valid, or of no request it sent) gets 400 with a JSON-RPC error without an id, not 202; a valid one still gets 202", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  for (
    const body of [
      { jsonrpc: "2.0", result: {} },
      { jsonrpc: "2.0", id: null, result: {} },
      { jsonrpc: "2.0", id: "x-1", result: {}, error: { code: 1, message: "x" } },
      { jsonrpc: "2.0", id: "x-1", error: { message: "no code" } },
      { id: "x-1", result: {} },
      { jsonrpc: "2.0", id: 12345, result: {} },
      { jsonrpc: "2.0", id: "not-of-the-server", error: { code: -1, message: "x" } },
    ]
  ) {
    const error = await refused(await send(serve, { session, body }), 400);
    strictEqual(error.code, -32600, JSON.stringify(body));
  }
  // A late answer to a request of the server (its id is the server's) is accepted, a broken
  // one too (it fails the server's request, as on stdio).
  for (const body of [{ jsonrpc: "2.0", id: "b-77", result: {} }, { id: "b-78", result: {} }]) {
    const late = await send(serve, { session, body });
    strictEqual(late.status, 202);
    strictEqual(await late.text(), "");
  }
  const pong = await send(serve, { session, body: { jsonrpc: "2.0", id: 2, method: "ping" } });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 2, result: {} }]);
});

Deno.test("serve black box: a client that sends half its body and closes the connection costs nothing: serve and the session go on", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  for (let i = 0; i < 3; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: serve.port });
    const head = [
      "POST /mcp HTTP/1.1",
      `host: 127.0.0.1:${serve.port}`,
      "content-type: application/json",
      `accept: ${BOTH}`,
      `mcp-session-id: ${session}`,
      "content-length: 1000",
      "",
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"',
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(head));
    await new Promise((resolve) => setTimeout(resolve, 50));
    conn.close();
  }
  const pong = await send(serve, { session, body: { jsonrpc: "2.0", id: 5, method: "ping" } });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 5, result: {} }]);
  ok(!/slow/.test(serve.stderr), serve.stderr);
});

Deno.test("serve black box: the token of --token-env must be a usable bearer token (empty, blank or with a space: exit 2, and its value is never printed); an address that is not loopback needs one", async () => {
  const upstream = ["--", "node", "x.js"];
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{ T: "" }, ["--token-env", "T"], /T is not set/],
    [{ T: "   " }, ["--token-env", "T"], /T is not set/],
    [{ T: "two words-SECRETVALUE" }, ["--token-env", "T"], /not a valid bearer token/],
    [{}, ["--host", "0.0.0.0"], /needs --token-env/],
    [{}, ["--host", "::"], /needs --token-env/],
    [{}, ["--host", "0"], /needs --token-env/],
    [{}, ["--host", "127.1"], /needs --token-env/],
  ];
  for (const [env, flags, reason] of cases) {
    const run = await runBridge(["serve", ...flags, ...upstream], env);
    strictEqual(run.code, 2, `${flags.join(" ")}: ${run.stderr}`);
    ok(reason.test(run.stderr), run.stderr);
    ok(!run.stderr.includes("SECRETVALUE"), run.stderr);
    ok(!run.stderr.includes("listening"), run.stderr);
  }
});

Deno.test("serve black box: during the grace of SIGTERM: initialize, GET and a new request get 503 with Retry-After; a notification gets 202 and DELETE ends a session; a second SIGTERM changes nothing; the request in flight finishes; exit 0", async () => {
  await using serve = await ServeProcess.start([
    "--shutdown-grace",
    "10",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const session = await initialize(serve);
  const other = await initialize(serve, "other");
  // The headers of a call's stream come once the bridge took it: it is in flight.
  const slow = messagesOf(await send(serve, { session, body: call(2, "slow", { ms: 1_500 }) }));
  serve.child.kill("SIGTERM");
  await waitFor("the stop line", () => serve.stderr.includes("stopping"));
  for (
    const s of [
      { body: INITIALIZE },
      { session, method: "GET" },
      { session, body: { jsonrpc: "2.0", id: 3, method: "ping" } },
    ] satisfies Send[]
  ) {
    const response = await send(serve, s);
    ok(response.headers.get("retry-after"), "no Retry-After");
    strictEqual((await refused(response, 503)).code, -32000);
  }
  serve.child.kill("SIGTERM");
  const note = await send(serve, {
    session,
    body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
  });
  strictEqual(note.status, 202);
  await note.body?.cancel();
  const deleted = await send(serve, { session: other, method: "DELETE" });
  strictEqual(deleted.status, 200);
  await deleted.body?.cancel();
  await refused(await send(serve, { session: other, method: "DELETE" }), 404);
  strictEqual(textOf((await slow).at(-1)), "slow done");
  strictEqual(await serve.stop(), 0);
});

Deno.test("serve black box: with --token-env, a client without the token learns nothing of the endpoints of --config: every path gets 401, a served one and an unknown one alike", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const config = `${dir}/servers.json`;
    const args = ["--", ...CONFORMANCE_UPSTREAM];
    await Deno.writeTextFile(config, JSON.stringify({ servers: { github: { args } } }));
    await using serve = await ServeProcess.start(["--config", config, "--token-env", "T"], {
      T: "the-token",
    });
    for (const path of ["/github/mcp", "/gitlab/mcp", "/mcp", "/"]) {
      const response = await send(serve, { path, body: INITIALIZE });
      strictEqual(response.status, 401, path);
      await response.body?.cancel();
    }
    const known = await send(serve, {
      path: "/gitlab/mcp",
      body: INITIALIZE,
      headers: { authorization: "Bearer the-token" },
    });
    strictEqual(known.status, 404);
    await known.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve black box: a body of pretty-printed JSON (line breaks and tabs between its tokens) is one message, as JSON allows; the same for an initialize and a notification", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const init = await send(serve, { body: JSON.stringify(INITIALIZE, null, 2) });
  const session = init.headers.get("mcp-session-id");
  ok(session, `no session: ${init.status}`);
  ok((await messagesOf(init))[0]?.result);
  const initialized = await send(serve, {
    session,
    body: '{\r\n\t"jsonrpc": "2.0",\r\n\t"method": "notifications/initialized"\r\n}\r\n',
  });
  strictEqual(initialized.status, 202);
  await initialized.body?.cancel();
  const pong = await send(serve, {
    session,
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }, null, "\t") + "\n",
  });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 2, result: {} }]);
  const called = await send(serve, {
    session,
    body: JSON.stringify(call(3, "whoami"), null, 4),
  });
  strictEqual(JSON.parse(textOf((await messagesOf(called)).at(-1))).name, "blackbox");
});

Deno.test("serve black box: a port in use is exit 1 with one line that says so; SIGINT stops serve as SIGTERM does (exit 0)", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const taken = await runBridge(["serve", "--port", String(serve.port), "--", "node", "x.js"]);
  strictEqual(taken.code, 1, taken.stderr);
  ok(/cannot listen on 127\.0\.0\.1:\d+: the address is in use/.test(taken.stderr), taken.stderr);
  ok(!/\n\s+at /.test(taken.stderr), `a stack trace: ${taken.stderr}`);
  await initialize(serve);
  strictEqual(await serve.stop("SIGINT"), 0);
  ok(serve.stderr.includes("stopping"), serve.stderr);
});
