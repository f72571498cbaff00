/**
 * `sendOnce` through the link's fetch (`linkFetch`), with Deno's fetch and
 * real servers: the rule of fetch that it rests on (a string body is sent
 * again after a reset of a reused HTTP/2 connection, a streamed one is not),
 * a request whose connection failed before any byte goes once more, as one
 * that the server refused with REFUSED_STREAM, and nothing else; the body
 * keeps its Content-Type and goes with a Content-Length.
 */

import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { linkFetch } from "../../lib/http/post_transport.ts";
import { type Attempt, mayResend, sendOnce } from "../../lib/http/send_once.ts";
import { transportSight } from "../../lib/http/transport_failure.ts";
import { startFaultProxy } from "../fixtures/fault_proxy.ts";
import { serveHttp2 } from "../fixtures/http2_upstream.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { serveRaw } from "../fixtures/http_upstream.ts";

const certificates = await makeCertificates();
const ca = await Deno.readTextFile(certificates.caFile);
const tls = { cert: certificates.cert, key: certificates.key, allowHTTP1: true };

/** A server that counts each body it got, and answers after `ms`. */
async function counting() {
  const runs = new Map<string, number>();
  let got = 0;
  const upstream = await serveHttp2(async (request) => {
    const { id, ms } = await request.json();
    runs.set(id, (runs.get(id) ?? 0) + 1);
    got++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return Response.json({ id });
  }, tls);
  const received = async (n: number) => {
    while (got < n) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return { upstream, runs, received };
}

/** 8 POSTs in flight after a first one, and a reset once the server has them all. */
async function eightAndReset(send: (url: string, id: string) => Promise<unknown>) {
  const { upstream, runs, received } = await counting();
  await using _upstream = upstream;
  await using proxy = await startFaultProxy(upstream.port, 1);
  const url = `https://127.0.0.1:${proxy.port}/mcp`;
  await send(url, "first");
  const pending = Array.from({ length: 8 }, (_, i) => send(url, `c${i}`).catch(() => "failed"));
  await received(9);
  strictEqual(proxy.resetAll(), 1);
  const outcomes = await Promise.all(pending);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return { outcomes, twice: [...runs].filter(([, n]) => n > 1).length };
}

Deno.test("send once: Deno's fetch sends a string body again after a reset of a reused HTTP/2 connection, not a Blob (the rule the fix rests on)", async () => {
  const client = Deno.createHttpClient({ caCerts: [ca], http1: false, http2: true });
  try {
    const post = (body: (text: string) => BodyInit) => (url: string, id: string) =>
      fetch(url, { method: "POST", client, body: body(JSON.stringify({ id, ms: 800 })) })
        .then((r) => r.text());
    // The body as the link sent it before the fix: every call multiplexed after the first runs twice.
    const replayed = await eightAndReset(post((text) => text));
    strictEqual(replayed.twice, 8, JSON.stringify(replayed));
    // A Blob is a stream to fetch (ReqBody::Streaming): it fails once, and runs once.
    const streamed = await eightAndReset(post((text) => new Blob([text])));
    strictEqual(streamed.twice, 0);
    deepStrictEqual(streamed.outcomes, Array(8).fill("failed"));
  } finally {
    client.close();
  }
});

Deno.test("send once: through the link's fetch, 8 POSTs and one reset each run once and fail once", async () => {
  const link = linkFetch({ caCerts: [ca] });
  try {
    const { outcomes, twice } = await eightAndReset((url, id) =>
      link.fetch(url, { method: "POST", body: JSON.stringify({ id, ms: 800 }) })
        .then((r) => r.text())
    );
    strictEqual(twice, 0);
    deepStrictEqual(outcomes, Array(8).fill("failed"));
  } finally {
    link.close();
  }
});

Deno.test("send once: a connection reset before any byte: the POST goes once more, and runs once", async () => {
  const { upstream, runs } = await counting();
  await using _upstream = upstream;
  await using proxy = await startFaultProxy(upstream.port, 1);
  const debug: string[] = [];
  const link = linkFetch({ caCerts: [ca], debug: (line) => debug.push(line) });
  try {
    proxy.resetNext(1);
    const response = await link.fetch(`https://127.0.0.1:${proxy.port}/mcp`, {
      method: "POST",
      body: JSON.stringify({ id: "a", ms: 0 }),
    });
    deepStrictEqual(await response.json(), { id: "a" });
    strictEqual(proxy.counts.connections, 2);
    deepStrictEqual([...runs], [["a", 1]]);
    strictEqual(debug.length, 1, debug.join());
    // Twice before any byte: the one resend is spent, and the request fails.
    proxy.resetNext(2);
    const url = `https://127.0.0.1:${proxy.port}/other`;
    const fresh = linkFetch({ caCerts: [ca] });
    try {
      const error = await fresh.fetch(url, { method: "POST", body: "{}" }).catch((e) => e);
      strictEqual(transportSight(error).kind, "connect", String(error?.cause));
      strictEqual(proxy.counts.connections, 4);
    } finally {
      fresh.close();
    }
  } finally {
    link.close();
  }
});

Deno.test("send once: a stream that the server refuses (REFUSED_STREAM) goes once more on the connection", async () => {
  let refused = 0;
  const bodies: string[] = [];
  const server = http2.createSecureServer({ cert: certificates.cert, key: certificates.key });
  server.on("stream", (stream, headers) => {
    if (headers[":path"] === "/refuse" && refused === 0) {
      refused++;
      stream.on("error", () => {});
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    let body = "";
    stream.on("data", (chunk) => body += chunk);
    stream.on("end", () => {
      bodies.push(body);
      stream.respond({ ":status": 200 });
      stream.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const link = linkFetch({ caCerts: [ca] });
  try {
    const response = await link.fetch(`https://127.0.0.1:${port}/refuse`, {
      method: "POST",
      body: "the body",
    });
    strictEqual(await response.text(), "ok");
    strictEqual(refused, 1);
    deepStrictEqual(bodies, ["the body"]);
  } finally {
    link.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

Deno.test("send once: a body keeps the Content-Type that fetch gives it, and goes with a Content-Length", async () => {
  await using upstream = serveRaw(() => new Response("ok"), "/token");
  const link = linkFetch();
  try {
    await (await link.fetch(upstream.url, {
      method: "POST",
      body: new URLSearchParams({ code: "c" }),
    })).text();
    await (await link.fetch(upstream.url, { method: "POST", body: "{}" })).text();
    const [form, json] = upstream.seen;
    strictEqual(form!.body, "code=c");
    strictEqual(
      form!.headers.get("content-type"),
      "application/x-www-form-urlencoded;charset=UTF-8",
    );
    strictEqual(form!.headers.get("content-length"), "6");
    strictEqual(form!.headers.get("transfer-encoding"), null);
    strictEqual(json!.headers.get("content-type"), "text/plain;charset=UTF-8");
    strictEqual(json!.headers.get("content-length"), "2");
  } finally {
    link.close();
  }
});

Deno.test("send once: the policy sends once more what provably did not run, and what is repeatable unless fetch may have", () => {
  const sight = (message: string) =>
    transportSight(new TypeError("fetch failed", { cause: new Error(message) }));
  // [the failure, resent: a request that may have run, a repeatable one whose body went as
  //  bytes (fetch may have resent it), a repeatable one whose body went as a stream]
  const cases: [string, boolean, boolean, boolean][] = [
    ["error sending request: client error (Connect): tcp connect error", true, true, true],
    ["connection error received: unexpected internal error encountered", true, true, true],
    // fetch sends a body of bytes once more itself after these: the bridge adds no third send.
    ["connection error received: not a result of an error", true, false, true],
    [
      "stream error received: refused stream before processing any application logic",
      true,
      false,
      true,
    ],
    ["Connection reset by peer (os error 104)", false, false, true],
    ["client error (SendRequest): connection closed before message completed", false, false, true],
    // What fetch never sends again: only a repeatable request goes once more.
    ["stream error received: unexpected internal error encountered", false, true, true],
    ["stream closed because of a broken pipe", false, true, true],
    ["peer closed connection without sending TLS close_notify", false, true, true],
    ["something else", false, true, true],
    // Refused by our own side (sent), not received: not a proof.
    [
      "stream error sent: refused stream before processing any application logic",
      false,
      true,
      true,
    ],
    // A proxy that refused the tunnel refuses it again.
    ["client error (Connect): unsuccessful tunnel", false, false, false],
  ];
  for (const [message, once, bytes, stream] of cases) {
    strictEqual(mayResend(sight(message), false, false), once, message);
    strictEqual(mayResend(sight(message), true, true), bytes, `${message} (repeatable, bytes)`);
    strictEqual(mayResend(sight(message), true, false), stream, `${message} (repeatable, stream)`);
  }
});

Deno.test("send once: a send `again` (the link's resend after a cut response) is the one resend: its body is a stream and nothing follows; onResend hears of the policy's own", async () => {
  // A connection closed under the stream: fetch never sends it again itself.
  const closed = () =>
    Promise.reject(
      new TypeError("fetch failed", { cause: new Error("stream closed because of a broken pipe") }),
    );
  const tries: { resend: boolean; body: unknown }[] = [];
  const attempt = (a: Attempt) => {
    tries.push({ resend: a.resend, body: a.init(true).body });
    return closed();
  };
  let told = 0;
  const init = { method: "POST", body: "{}" };
  await rejects(sendOnce(init, attempt, { repeatable: true, again: true, onResend: () => told++ }));
  deepStrictEqual([tries.length, tries[0]!.resend, tries[0]!.body instanceof Blob, told], [
    1,
    true,
    true,
    0,
  ]);
  tries.length = 0;
  await rejects(sendOnce(init, attempt, { repeatable: true, onResend: () => told++ }));
  deepStrictEqual(tries.map((t) => t.resend), [false, true]);
  strictEqual(told, 1);
});
