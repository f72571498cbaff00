/**
 * The ends of `serve`'s requests and sessions as a real program, over raw
 * HTTP (every byte of each POST's stream is counted): SIGTERM with requests
 * that outlast `--shutdown-grace` (each gets one answer, the error
 * `stopping`, and is canceled upstream), and a client that goes away before
 * the answer of its initialize (its session ends at once).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { waitFor, within } from "../wait.ts";
import { CONFORMANCE_UPSTREAM, ServeProcess } from "./serve_helpers.ts";

type Obj = Record<string, unknown>;

const HEADERS = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
};

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

/** The messages of a response body: one JSON body, or the `data:` lines of an SSE stream. */
function messagesOf(response: Response, body: string): Obj[] {
  if (response.headers.get("content-type")?.startsWith("application/json")) {
    return [JSON.parse(body)];
  }
  return body.split("\n").filter((line) => line.startsWith("data:")).map((line) =>
    JSON.parse(line.slice(5))
  );
}

/** A session of a raw client: its id, and POST of one message. */
async function openSession(serve: ServeProcess): Promise<(message: Obj) => Promise<Response>> {
  const response = await fetch(serve.url(), {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify(INITIALIZE),
  });
  const id = response.headers.get("mcp-session-id");
  const [answer] = messagesOf(response, await response.text());
  ok(id && answer?.result, `no session: ${response.status} ${JSON.stringify(answer)}`);
  const post = (message: Obj) =>
    fetch(serve.url(), {
      method: "POST",
      headers: { ...HEADERS, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
    });
  const initialized = await post({ method: "notifications/initialized" });
  await initialized.body?.cancel();
  strictEqual(initialized.status, 202);
  return post;
}

Deno.test("serve: SIGTERM: each request still in flight after --shutdown-grace gets one answer, the error stopping, and is canceled upstream; exit 0", async () => {
  await using serve = await ServeProcess.start([
    "--shutdown-grace",
    "0.5",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const post = await openSession(serve);
  const calls = [2, 3].map(async (id) => {
    const response = await post({
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 30_000 } },
    });
    return { id, messages: messagesOf(response, await response.text()), at: Date.now() };
  });
  // Both calls reached the upstream (the SDK server runs them at once).
  await new Promise((resolve) => setTimeout(resolve, 500));
  const stopAt = Date.now();
  serve.child.kill("SIGTERM");
  const answers = await within(Promise.all(calls), 10_000, "the answers of the calls");
  for (const { id, messages, at } of answers) {
    deepStrictEqual(messages, [{
      jsonrpc: "2.0",
      id,
      error: {
        code: -32000,
        message: "The server stops. Try again later.",
        data: { cause: "stopping" },
      },
    }]);
    // After the grace (0.5 s), long before the end of the call (30 s).
    ok(at - stopAt >= 400 && at - stopAt < 5_000, `answered ${at - stopAt} ms after SIGTERM`);
  }
  strictEqual(await serve.stop(), 0);
  // Canceled upstream: the server's handler saw the cancellation of each.
  strictEqual(serve.stderr.match(/conformance-upstream: slow canceled/g)?.length, 2, serve.stderr);
  ok(
    serve.stderr.includes(
      "session #1: the shutdown grace passed: 2 requests in flight get the error stopping and are canceled",
    ),
    serve.stderr,
  );
});

Deno.test("serve: a client that goes away before the answer of its initialize: its session ends at once, not after --session-idle; the upstream stops after its grace", async () => {
  await using serve = await ServeProcess.start([
    "--upstream-grace",
    "0",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const gone = new AbortController();
  const response = await fetch(serve.url(), {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify(INITIALIZE),
    signal: gone.signal,
  });
  // The stream of its answer is open (the upstream starts): the client goes away.
  strictEqual(response.headers.get("content-type"), "text/event-stream");
  gone.abort();
  await response.body?.cancel().catch(() => {});
  await waitFor(
    "the end of the session",
    () => serve.stderr.includes("session #1: the session ended"),
    {
      timeoutMs: 5_000,
    },
  );
  ok(
    serve.stderr.includes(
      "session #1: the client went away before the answer of initialize: the session ends",
    ),
    serve.stderr,
  );
  // No session holds the upstream: it stops (a grace of 0 s).
  await waitFor(
    "the stop of the upstream",
    () => serve.stderr.includes("the upstream server stops"),
    {
      timeoutMs: 5_000,
    },
  );
  strictEqual(await serve.stop(), 0);
});
