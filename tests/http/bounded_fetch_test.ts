/** The fetch of the 2025-11-25 HTTP link: the limits, the sign-in headers and challenges. */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { boundedFetch } from "../../lib/http/bounded_fetch.ts";
import { errorBodySign } from "../../lib/upstream/http_response.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { TokenSource } from "../../lib/http/token_source.ts";

const enc = new TextEncoder();
const REQUEST = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "m" }) };

/** A body of `chunks`, then (without `end`) open for ever; counts the chunks read. */
function body(chunks: string[], end = true) {
  const state = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[state.pulled++];
      if (chunk !== undefined) controller.enqueue(enc.encode(chunk));
      else if (end) controller.close();
      // else: never ends
    },
  });
  return { stream, state };
}

function serving(response: () => Response, seen: Headers[] = []): typeof fetch {
  return (_input, init) => {
    seen.push(new Headers(init?.headers));
    return Promise.resolve(response());
  };
}

Deno.test("legacy fetch: a JSON body over the limit fails at once, unread, with its status", async () => {
  // A Content-Length over the limit: nothing of the body is read.
  const big = body(["x".repeat(100)]);
  const byLength = boundedFetch({
    maxResponseBytes: 50,
    fetch: serving(() =>
      new Response(big.stream, {
        headers: { "content-type": "application/json", "content-length": "100" },
      })
    ),
  });
  await rejects(byLength("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    strictEqual(error.kind, "invalid_response");
    strictEqual(error.status, 200);
    return true;
  });
  // Only the chunk that a ReadableStream pulls by itself when it is made.
  ok(big.state.pulled <= 1);
  // A body that never ends: the read fails as soon as it passes the limit.
  const endless = body(["x".repeat(40), "y".repeat(40)], false);
  const streamed = boundedFetch({
    maxResponseBytes: 50,
    fetch: serving(() =>
      new Response(endless.stream, { headers: { "content-type": "application/json" } })
    ),
  });
  await rejects(streamed("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    deepStrictEqual([error.kind, error.status], ["invalid_response", 200]);
    return true;
  });
});

Deno.test("legacy fetch: a JSON body that the network cuts, or that is not JSON, is invalid_response with its status; a stream that ends tells the failure of a request without its response", async () => {
  const cut = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(enc.encode('{"jsonrpc":"2.0",')),
    pull: (controller) => controller.error(new TypeError("error reading a body from connection")),
  });
  const json = { headers: { "content-type": "application/json" } };
  const cutFetch = boundedFetch({
    maxResponseBytes: 1000,
    fetch: serving(() => new Response(cut, json)),
  });
  await rejects(cutFetch("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    deepStrictEqual([error.kind, error.status, error.transport], [
      "invalid_response",
      200,
      "the connection failed during the body of the response",
    ]);
    return true;
  });
  const notJson = boundedFetch({
    maxResponseBytes: 1000,
    fetch: serving(() => new Response('{"jsonrpc":"2.0",', json)),
  });
  const response = await notJson("http://127.0.0.1/", REQUEST);
  await rejects(response.json(), (error) => {
    ok(error instanceof UpstreamFailure);
    deepStrictEqual([error.kind, error.status], ["invalid_response", 200]);
    return true;
  });
  // The link fails the request with `unanswered` when its response did not come.
  const ends: unknown[] = [];
  const stream = boundedFetch({
    maxResponseBytes: 1000,
    fetch: serving(() =>
      new Response(body([": nothing\n\n"]).stream, {
        status: 200,
        headers: { "content-type": "text/event-stream" },
      })
    ),
    onBodyEnd: (id, failure, unanswered) =>
      ends.push([id, failure, unanswered.kind, unanswered.status, unanswered.transport]),
  });
  await (await stream("http://127.0.0.1/", REQUEST)).text();
  deepStrictEqual(ends, [[
    7,
    undefined,
    "transport_failed",
    200,
    "the stream ended before its response",
  ]]);
});

Deno.test("legacy fetch: the limit of a stream is per event (LF, CRLF), not per body", async () => {
  const event = (n: number, eol: string) => `data: ${"e".repeat(30)}${n}${eol}${eol}`;
  const ends: unknown[] = [];
  const fetchOf = (chunks: string[]) =>
    boundedFetch({
      maxResponseBytes: 40,
      fetch: serving(() =>
        new Response(body(chunks).stream, { headers: { "content-type": "text/event-stream" } })
      ),
      onBodyEnd: (id, failure) => ends.push([id, failure?.kind]),
    });
  const text = await (await fetchOf([event(1, "\n") + event(2, "\r\n"), event(3, "\r")])(
    "http://127.0.0.1/",
    REQUEST,
  )).text();
  ok(text.includes("e3"));
  deepStrictEqual(ends, [[7, undefined]]);
  // One event over the limit, its blank line in the same chunk.
  const over = await fetchOf([`data: ${"o".repeat(60)}\n\n`])("http://127.0.0.1/", REQUEST);
  await rejects(over.text(), (error) => error instanceof UpstreamFailure);
  deepStrictEqual(ends[1], [7, "invalid_response"]);
});

Deno.test("legacy fetch: the token of the sign-in, a challenge answered once, a refusal", async () => {
  const calls: string[] = [];
  let token = "Bearer one";
  const source: TokenSource = {
    authorization: () => Promise.resolve(token),
    challenge: (challenge, attempt) => {
      calls.push(`${challenge.status}:${attempt}`);
      if (attempt > 1) return Promise.resolve("refused");
      token = "Bearer two";
      return Promise.resolve("retry");
    },
    setUrlPrompt: () => {},
    nextSignIn: () => Promise.resolve(),
  };
  const seen: Headers[] = [];
  let status = 401;
  const fetchFn = boundedFetch({
    maxResponseBytes: 100,
    tokenSource: source,
    fetch: serving(() => {
      const response = new Response("{}", {
        status,
        headers: { "content-type": "application/json" },
      });
      status = 200;
      return response;
    }, seen),
  });
  const response = await fetchFn("http://127.0.0.1/", { ...REQUEST, headers: { "x-key": "k" } });
  strictEqual(response.status, 200);
  deepStrictEqual(seen.map((h) => h.get("authorization")), ["Bearer one", "Bearer two"]);
  ok(seen.every((h) => h.get("x-key") === "k" && h.get("accept-encoding") === "identity"));
  deepStrictEqual(calls, ["401:1"]);
  // Two challenges of one request: access_refused, with the status.
  const always = boundedFetch({
    maxResponseBytes: 100,
    tokenSource: source,
    fetch: serving(() => new Response(null, { status: 403 })),
  });
  await rejects(always("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    strictEqual(error.kind, "sign_in");
    strictEqual(error.signIn?.cause, "access_refused");
    strictEqual(error.status, 403);
    return true;
  });
});

Deno.test("the sign of an older server: a JSON-RPC error body, or a body that asks for a session", () => {
  ok(errorBodySign('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"},"id":null}'));
  ok(errorBodySign("Bad Request: No valid session ID provided"));
  ok(errorBodySign("Mcp-Session-Id header is required"));
  ok(!errorBodySign("<html>Not Found</html>"));
  ok(!errorBodySign('{"error":"not found"}'));
});

Deno.test("legacy fetch: the body of an error status is read no further than 64 KiB; a request fails with the status and the JSON-RPC error's message", async () => {
  const endless = (type: string) => {
    const state = { pulled: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        state.pulled++;
        controller.enqueue(enc.encode("x".repeat(1024)));
      },
    });
    return {
      response: new Response(stream, { status: 500, headers: { "content-type": type } }),
      state,
    };
  };
  for (const type of ["text/plain", "text/event-stream"]) {
    const made = endless(type);
    const fetchFn = boundedFetch({
      maxResponseBytes: 1 << 20,
      fetch: () => Promise.resolve(made.response),
    });
    await rejects(fetchFn("http://127.0.0.1/", REQUEST), (error) => {
      ok(error instanceof UpstreamFailure);
      deepStrictEqual([error.kind, error.status, error.upstreamMessage], [
        "transport_failed",
        500,
        undefined,
      ]);
      return true;
    });
    ok(made.state.pulled <= 66, `${made.state.pulled} chunks read of ${type}`);
  }
  // A GET (no request): the transport gets the status and the head of the body.
  const made = endless("text/plain");
  const get = boundedFetch({
    maxResponseBytes: 1 << 20,
    fetch: () => Promise.resolve(made.response),
  });
  const response = await get("http://127.0.0.1/", { method: "GET" });
  strictEqual(response.status, 500);
  strictEqual((await response.text()).length, 0, "over 64 KiB: no text of it");
  ok(made.state.pulled <= 66);
  const small = boundedFetch({
    maxResponseBytes: 1 << 20,
    fetch: () =>
      Promise.resolve(
        Response.json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no\nway" } }, {
          status: 400,
        }),
      ),
  });
  await rejects(small("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    deepStrictEqual([error.kind, error.status, error.upstreamMessage], [
      "transport_failed",
      400,
      "no way",
    ]);
    return true;
  });
});

Deno.test("legacy fetch: a 202 to a request is invalid_response with its status; to a notification it goes to the transport", async () => {
  const fetchFn = boundedFetch({
    maxResponseBytes: 1 << 20,
    fetch: () => Promise.resolve(new Response(null, { status: 202 })),
  });
  await rejects(fetchFn("http://127.0.0.1/", REQUEST), (error) => {
    ok(error instanceof UpstreamFailure);
    deepStrictEqual([error.kind, error.status], ["invalid_response", 202]);
    return true;
  });
  const note = { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method: "n" }) };
  strictEqual((await fetchFn("http://127.0.0.1/", note)).status, 202);
});
