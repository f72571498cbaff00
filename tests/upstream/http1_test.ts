/**
 * The HTTP/1.1 client of the HTTP link against real servers on 127.0.0.1:
 * Deno.serve for the ordinary framing (keep-alive, chunked streams, a body
 * read in place), and a raw TCP server for what Deno.serve will not send (a
 * connection closed while idle, an interim response, a bad head, a body that
 * ends early or runs to the end of the connection).
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { Http1Client, HttpProtocolError } from "../../lib/upstream/http1.ts";
import { headEnd } from "../../lib/upstream/http1_wire.ts";
import { fetchTransport, type PostResponse } from "../../lib/upstream/post_transport.ts";
import { readJsonBody, readKnownLength, TooLargeError } from "../../lib/upstream/sse.ts";

import { waitFor } from "../wait.ts";

const enc = new TextEncoder();
const never = () => new AbortController().signal;

/** Deno.serve on 127.0.0.1; each request's remote port and headers are kept. */
function serve(handler: (request: Request) => Response | Promise<Response>) {
  const ports: number[] = [];
  const heads: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (r, info) => {
    ports.push(info.remoteAddr.port);
    heads.push(r.headers);
    return handler(r);
  });
  return {
    url: new URL(`http://127.0.0.1:${server.addr.port}/mcp?k=v`),
    ports,
    heads,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * A raw TCP server: `answer` gets the connection's number and the request's
 * (both count from 1 over the server's life) and writes what it likes; it
 * returns false to close the connection.
 */
function serveRaw(
  answer: (conn: Deno.Conn, connection: number, request: number) => Promise<boolean>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  let requests = 0;
  const conns = new Set<Deno.Conn>();
  (async () => {
    for await (const conn of listener) {
      const number = ++connections;
      conns.add(conn);
      (async () => {
        const buffer = new Uint8Array(65536);
        let text = "";
        for (;;) {
          const n = await conn.read(buffer).catch(() => null);
          if (n === null) break;
          text += new TextDecoder().decode(buffer.subarray(0, n));
          const end = text.indexOf("\r\n\r\n");
          if (end === -1) continue;
          const length = Number(/content-length: (\d+)/.exec(text)?.[1] ?? 0);
          if (text.length < end + 4 + length) continue;
          text = text.slice(end + 4 + length);
          if (!await answer(conn, number, ++requests)) break;
        }
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    get connections() {
      return connections;
    },
    [Symbol.dispose]: () => {
      listener.close();
      for (const conn of conns) conn.close();
    },
  };
}

const write = (conn: Deno.Conn, text: string) => conn.write(enc.encode(text)).then(() => {});
const post = (client: Http1Client, url: URL, body = "{}", signal = never()) =>
  client.post(url, { headers: [["x-test", "é"]], body, signal });
const text = async (response: PostResponse) =>
  new TextDecoder().decode(await response.arrayBuffer());

Deno.test("http1: POSTs go over one keep-alive connection; the request has its length, host and headers", async () => {
  await using server = serve(async (r) => new Response(`${r.method} ${await r.text()}`));
  const client = new Http1Client();
  strictEqual(await text(await post(client, server.url, '{"a":"ü"}')), 'POST {"a":"ü"}');
  strictEqual(await text(await post(client, server.url)), "POST {}");
  strictEqual(server.ports[0], server.ports[1], "the second POST reused the connection");
  strictEqual(client.openConnections, 1);
  const head = server.heads[0]!;
  strictEqual(head.get("content-length"), String(enc.encode('{"a":"ü"}').length));
  strictEqual(head.get("host"), server.url.host);
  strictEqual(head.get("x-test"), "é", "a header value is sent as Latin-1, not UTF-8");
  strictEqual(head.get("accept-encoding"), null);
  client.close();
  strictEqual(client.openConnections, 0);
});

Deno.test("http1: ASCII headers with an ASCII body and with a UTF-8 body: each body and its length in bytes", async () => {
  await using server = serve(async (r) => new Response(await r.text()));
  const client = new Http1Client();
  for (const body of ['{"a":"b"}', '{"a":"ü€😀"}']) {
    const response = await client.post(server.url, {
      headers: [["mcp-method", "tools/call"]],
      body,
      signal: never(),
    });
    strictEqual(await text(response), body);
    strictEqual(server.heads.at(-1)!.get("content-length"), String(enc.encode(body).length));
    strictEqual(server.heads.at(-1)!.get("mcp-method"), "tools/call");
  }
  client.close();
});

Deno.test("http1: a chunked stream arrives chunk by chunk, and the connection is reused after it", async () => {
  let release!: () => void;
  const later = new Promise<void>((resolve) => release = resolve);
  await using server = serve(() =>
    new Response(
      new ReadableStream({
        async start(controller) {
          controller.enqueue(enc.encode("event: message\ndata: 1\n\n"));
          await later;
          controller.enqueue(enc.encode("event: message\ndata: 2\n\n"));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const client = new Http1Client();
  const response = await post(client, server.url);
  strictEqual(response.headers.get("content-type"), "text/event-stream");
  const reader = response.body!.getReader();
  const first = await reader.read();
  strictEqual(new TextDecoder().decode(first.value), "event: message\ndata: 1\n\n");
  release();
  let rest = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest += new TextDecoder().decode(r.value);
  }
  strictEqual(rest, "event: message\ndata: 2\n\n");
  await text(await post(client, server.url));
  strictEqual(server.ports[0], server.ports[1]);
  client.close();
});

Deno.test("http1: a body of a known length is read in place by a BYOB reader", async () => {
  const big = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i % 251);
  await using server = serve(() => new Response(big));
  const client = new Http1Client();
  const response = await post(client, server.url);
  strictEqual(response.headers.get("content-length"), String(big.length));
  const bytes = await readKnownLength(response.body!, big.length);
  deepStrictEqual(bytes, big);
  await (await post(client, server.url)).arrayBuffer();
  strictEqual(server.ports[0], server.ports[1], "the connection went back to the pool");
  client.close();
});

Deno.test("http1: a pooled connection that the server closed is replaced once; a new one is not retried", async () => {
  using server = serveRaw(async (conn) => {
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    return false; // closes after one response, without Connection: close
  });
  const client = new Http1Client();
  strictEqual(await text(await post(client, server.url)), "ok");
  // Let the close of the server reach us, as a connection that timed out while idle.
  await new Promise((resolve) => setTimeout(resolve, 50));
  strictEqual(await text(await post(client, server.url)), "ok");
  strictEqual(server.connections, 2);
  client.close();

  using silent = serveRaw(() => Promise.resolve(false));
  const fresh = new Http1Client();
  await rejects(post(fresh, silent.url), (e) => e instanceof Error);
  strictEqual(silent.connections, 1, "a connection that was never used is not tried again");
  strictEqual(fresh.openConnections, 0);
});

Deno.test("http1: an idle connection older than idleMs is not reused", async () => {
  await using server = serve(() => new Response("ok"));
  const client = new Http1Client({ idleMs: 0 });
  await text(await post(client, server.url));
  await text(await post(client, server.url));
  ok(server.ports[0] !== server.ports[1], "a new connection");
  strictEqual(client.openConnections, 1, "the old one was closed");
  client.close();
});

Deno.test("http1: interim responses are skipped; a body without a length runs to the end of the connection", async () => {
  using server = serveRaw(async (conn) => {
    await write(
      conn,
      "HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\nHTTP/1.1 200 OK\r\n" +
        'content-type: application/json\r\nconnection: close\r\n\r\n{"to":"the end"}',
    );
    return false;
  });
  const client = new Http1Client();
  const response = await post(client, server.url);
  strictEqual(response.status, 200);
  strictEqual(response.headers.get("link"), null, "the headers are the final response's");
  strictEqual(await text(response), '{"to":"the end"}');
  strictEqual(client.openConnections, 0, "a body to the end is not reused");
  client.close();
});

Deno.test("http1: a bad head, a body that ends early and a bad chunk are errors, never a hang", async () => {
  const answers = [
    "HTTP/2 200\r\n\r\n",
    "HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\nx",
    `HTTP/1.1 200 OK\r\nx: ${"a".repeat(70_000)}\r\n\r\n`,
  ];
  for (const answer of answers) {
    using server = serveRaw(async (conn) => {
      await write(conn, answer);
      return false;
    });
    const client = new Http1Client();
    await rejects(
      post(client, server.url).then(text),
      (e) => e instanceof HttpProtocolError,
      JSON.stringify(answer.slice(0, 60)),
    );
    strictEqual(client.openConnections, 0);
    client.close();
  }
});

Deno.test("http1: the signal stops a POST waiting for its head and a body being read, and closes the connection", async () => {
  using server = serveRaw(async (conn, _, request) => {
    if (request === 1) return true; // never answers the first request
    await write(conn, "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\none\r\n");
    return true; // and never ends the body
  });
  const client = new Http1Client();
  const first = new AbortController();
  const waiting = post(client, server.url, "{}", first.signal);
  setTimeout(() => first.abort(new Error("stop the head")), 20);
  await rejects(waiting, /stop the head/);
  strictEqual(client.openConnections, 0);

  const second = new AbortController();
  const streaming = await post(client, server.url, "{}", second.signal);
  const reader = streaming.body!.getReader();
  strictEqual(new TextDecoder().decode((await reader.read()).value), "one");
  const next = reader.read();
  second.abort(new Error("stop the body"));
  await rejects(next, /stop the body/);
  strictEqual(client.openConnections, 0);
  client.close();
});

Deno.test("http1: 204 and 304 have no body and keep the connection", async () => {
  await using server = serve((r) =>
    new Response(null, { status: r.headers.get("x-s") ? 304 : 204 })
  );
  const client = new Http1Client();
  const a = await client.post(server.url, { headers: [], body: "{}", signal: never() });
  strictEqual(a.status, 204);
  strictEqual(a.body, null);
  const b = await client.post(server.url, {
    headers: [["x-s", "1"]],
    body: "{}",
    signal: never(),
  });
  strictEqual(b.status, 304);
  strictEqual(server.ports[0], server.ports[1]);
  client.close();
});

Deno.test("http1: fetchTransport sends the POST through fetch without following redirects", async () => {
  await using server = serve(() =>
    new Response(null, { status: 307, headers: { location: "/x" } })
  );
  const transport = fetchTransport();
  const response = await transport.post(server.url, {
    headers: [],
    body: "{}",
    signal: never(),
  });
  strictEqual(response.status, 307);
  await response.body?.cancel();
  transport.close();
});

Deno.test("http1: a body of a known length that comes in parts is read whole, and the connection is reused", async () => {
  using server = serveRaw(async (conn) => {
    await write(conn, 'HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n{"a":');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await write(conn, '"part"}');
    return true;
  });
  const client = new Http1Client();
  strictEqual(await text(await post(client, server.url)), '{"a":"part"}');
  strictEqual(await text(await post(client, server.url)), '{"a":"part"}');
  strictEqual(server.connections, 1);
  client.close();
});

Deno.test("http1: when every pooled connection is stale, the one retry goes on a new connection", async () => {
  using server = serveRaw(async (conn) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    return false; // closes after one response, without Connection: close
  });
  const client = new Http1Client();
  // Two at once: two connections go back to the pool, and the server closes both.
  await Promise.all([post(client, server.url).then(text), post(client, server.url).then(text)]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  strictEqual(await text(await post(client, server.url)), "ok");
  strictEqual(server.connections, 3);
  client.close();
});

Deno.test("http1: the signal stops a TLS handshake that never ends", async () => {
  // A TCP server that accepts and never speaks TLS.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) accepted.push(conn);
  })().catch(() => {});
  const client = new Http1Client();
  const controller = new AbortController();
  const url = new URL(`https://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`);
  const t0 = performance.now();
  setTimeout(() => controller.abort(new Error("stop the handshake")), 100);
  await rejects(post(client, url, "{}", controller.signal), /stop the handshake/);
  ok(performance.now() - t0 < 2000, "the POST ended at the abort");
  strictEqual(client.openConnections, 0);
  client.close();
  listener.close();
  for (const conn of accepted) conn.close();
});

Deno.test("http1: a reader that stops at the last event of a chunked stream leaves the connection to the pool", async () => {
  await using server = serve(() =>
    new Response(ReadableStream.from([enc.encode("event: message\ndata: last\n\n")]), {
      headers: { "content-type": "text/event-stream" },
    })
  );
  const client = new Http1Client();
  for (let i = 0; i < 3; i++) {
    const reader = (await post(client, server.url)).body!.getReader();
    strictEqual(
      new TextDecoder().decode((await reader.read()).value),
      "event: message\ndata: last\n\n",
    );
    await reader.cancel(); // as the link does once it has the response
    // The end of the body is read in the background (the next request of a client
    // comes a round trip later).
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  strictEqual(new Set(server.ports).size, 1, `ports ${server.ports.join()}`);
  client.close();
});

Deno.test("http1: a stream that goes on after its reader stopped is closed with its connection", async () => {
  await using server = serve(() =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(enc.encode("event: message\ndata: first\n\n"));
        }, // and never more
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const client = new Http1Client();
  const reader = (await post(client, server.url)).body!.getReader();
  await reader.read();
  await reader.cancel();
  await waitFor("the connection closed", () => client.openConnections === 0, { timeoutMs: 3000 });
  client.close();
});

Deno.test("http1: a Content-Length beside Transfer-Encoding says nothing: the limit counts the body", async () => {
  using server = serveRaw(async (conn) => {
    const chunk = "x".repeat(4000);
    await write(
      conn,
      "HTTP/1.1 200 OK\r\ncontent-length: 10\r\ntransfer-encoding: chunked\r\n\r\n" +
        `${(4000).toString(16)}\r\n${chunk}\r\n`.repeat(3) + "0\r\n\r\n",
    );
    return true;
  });
  const client = new Http1Client();
  await rejects(readJsonBody(await post(client, server.url), 1000), TooLargeError);
  client.close();
});

Deno.test("http1: a body is read once; a response dropped at an abort frees its connection", async () => {
  await using server = serve(() => new Response("ok"));
  const client = new Http1Client();
  const response = await post(client, server.url);
  strictEqual(await text(response), "ok");
  await rejects(response.arrayBuffer(), TypeError);
  strictEqual(await text(await post(client, server.url)), "ok", "the next POST is not disturbed");

  const controller = new AbortController();
  await post(client, server.url, "{}", controller.signal); // its body is never read
  controller.abort();
  strictEqual(client.openConnections, 0, "the aborted POST had the one connection, now closed");
  client.close();
});

Deno.test("http1: the end of a head is found between from and to only, at its place in the buffer", () => {
  const buffer = new Uint8Array(64);
  buffer.set(enc.encode("old\r\n\r\nHTTP/1.1 200 OK\r\na: b\r\n\r\n{}"), 0);
  const head = 7; // where the new response starts
  strictEqual(headEnd(buffer, head, 40), 7 + "HTTP/1.1 200 OK\r\na: b".length);
  // Not before `from`, and not when the CRLF CRLF runs past `to`.
  strictEqual(headEnd(buffer, head, 7 + "HTTP/1.1 200 OK\r\na: b\r\n\r".length), -1);
  // Stale bytes past `to` (an old head) are not read.
  buffer.set(enc.encode("\r\n\r\n"), 50);
  strictEqual(headEnd(buffer, 40, 40), -1);
  strictEqual(headEnd(buffer, 41, 45), -1);
});
