/**
 * `ownExchangeFetch`: the body of a POST keeps only the response of its own
 * request, whatever the chunks and line ends of its SSE stream.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { FOREIGN_RESPONSE, ownExchangeFetch } from "../../lib/legacy/own_exchange.ts";
import { boundedFetch } from "../../lib/http/bounded_fetch.ts";

const enc = new TextEncoder();

/** The body that the SDK would read of a POST of `sent`, the server's body in `chunks`. */
async function through(
  sent: unknown,
  chunks: string[],
  type = "text/event-stream",
): Promise<{ body: string; drops: number }> {
  let drops = 0;
  const fetchFn = ownExchangeFetch(() => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(enc.encode(chunk));
        controller.close();
      },
    });
    return Promise.resolve(new Response(body, { headers: { "content-type": type } }));
  }, (line) => {
    strictEqual(line, FOREIGN_RESPONSE);
    drops++;
  });
  const response = await fetchFn("http://127.0.0.1/mcp", {
    method: "POST",
    body: JSON.stringify(sent),
  });
  const body = type === "application/json"
    ? JSON.stringify(await response.json())
    : await response.text();
  return { body, drops };
}

const request = { jsonrpc: "2.0", id: 1, method: "tools/call" };
const own = JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} });
const other = JSON.stringify({ jsonrpc: "2.0", id: 2, result: {} });
const flipped = JSON.stringify({ jsonrpc: "2.0", id: "1", result: {} });
const note = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: {} });
const ask = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });

Deno.test("own exchange: an SSE stream keeps its own response, notifications and requests; other responses go, in any chunks", async () => {
  for (const eol of ["\n", "\r\n", "\r"]) {
    const events = [other, note, flipped, ask, own].map((data, n) =>
      `id: e${n}${eol}event: message${eol}data: ${data}${eol}${eol}`
    );
    const whole = events.join("");
    const kept = [events[1], events[3], events[4]].join("");
    for (const size of [1, 3, 7, whole.length]) {
      const chunks = [];
      for (let at = 0; at < whole.length; at += size) chunks.push(whole.slice(at, at + size));
      const { body, drops } = await through(request, chunks);
      // A CRLF that a chunk split may leave a blank line: the same events.
      deepStrictEqual(
        body.split(/\r\n|\r|\n/).filter((l) => l),
        kept.split(/\r\n|\r|\n/).filter((l) => l),
      );
      strictEqual(drops, 2);
    }
  }
});

Deno.test("own exchange: a JSON body of another response becomes an empty batch; its own stays", async () => {
  deepStrictEqual(await through(request, [other], "application/json"), { body: "[]", drops: 1 });
  deepStrictEqual(await through(request, [own], "application/json"), { body: own, drops: 0 });
  deepStrictEqual(await through(request, [`[${own},${other}]`], "application/json"), {
    body: `[${own}]`,
    drops: 1,
  });
});

Deno.test("own exchange: the POST of a notification or an answer keeps no response", async () => {
  const answer = { jsonrpc: "2.0", id: 5, result: {} };
  const { body, drops } = await through(answer, [`data: ${own}\n\ndata: ${note}\n\n`]);
  strictEqual(body, `data: ${note}\n\n`);
  strictEqual(drops, 1);
});

Deno.test("own exchange: an SSE stream ends after its own response; the server's body is cancelled", async () => {
  let cancelled = false;
  const fetchFn = ownExchangeFetch(() => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // The response and an event after it in one chunk; the stream stays open.
        controller.enqueue(enc.encode(`data: ${note}\n\ndata: ${own}\n\ndata: ${note}\n\n`));
      },
      cancel: () => void (cancelled = true),
    });
    return Promise.resolve(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
    );
  }, () => {});
  const response = await fetchFn("http://127.0.0.1/mcp", {
    method: "POST",
    body: JSON.stringify(request),
  });
  // A line feed more after the own response: nothing to a parser (see own_exchange.ts).
  strictEqual(await response.text(), `data: ${note}\n\ndata: ${own}\n\n\n`);
  strictEqual(cancelled, true);
});

Deno.test("own exchange: a JSON batch of its own response and a malformed response of another id keeps its own; the other is dropped, not a failure", async () => {
  const malformed = JSON.stringify({ jsonrpc: "2.0", id: 9, result: "not an object" });
  let drops = 0;
  const bounded = boundedFetch({
    maxResponseBytes: 1 << 20,
    fetch: () =>
      Promise.resolve(
        new Response(`[${own},${malformed}]`, { headers: { "content-type": "application/json" } }),
      ),
  });
  const fetchFn = ownExchangeFetch(bounded, () => drops++);
  const response = await fetchFn("http://127.0.0.1/mcp", {
    method: "POST",
    body: JSON.stringify(request),
  });
  deepStrictEqual(await response.json(), [JSON.parse(own)]);
  strictEqual(drops, 1);
});
