/**
 * The HTTP link on a real network's terms, through the real bridge: an
 * HTTPS upstream on node:http2 (the SDK v2 handler, a CA made in the test)
 * carries 64 calls in flight on at most 2 connections; a server that
 * speaks only HTTP/2 works; `localhost` reaches a server bound to
 * 127.0.0.1 only.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveHttp2 } from "../fixtures/http2_upstream.ts";
import { result, serveMcp } from "../fixtures/http_raw.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { sdkHandler } from "../fixtures/http_upstream.ts";
import { BridgeProcess } from "./helpers.ts";

const certificates = await makeCertificates();
const tls = { cert: certificates.cert, key: certificates.key };

Deno.test("http2: 64 calls in flight to an upstream that offers HTTP/2 use at most 2 connections", async () => {
  const handler = sdkHandler({ lean: true });
  await using upstream = await serveHttp2((request) => handler.fetch(request), {
    ...tls,
    allowHTTP1: true,
  });
  try {
    await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url]);
    ok("result" in await bridge.initialize(), bridge.stderr);
    for (let id = 1; id <= 64; id++) {
      await bridge.request(id, "tools/call", { name: "echo", arguments: { text: `n${id}` } });
    }
    for (let id = 1; id <= 64; id++) {
      deepStrictEqual((await bridge.response(id)).result, {
        content: [{ type: "text", text: `n${id}` }],
      });
    }
    strictEqual(await bridge.exit(), 0);
  } finally {
    await handler.close();
  }
  ok(upstream.connections() <= 2, `${upstream.connections()} connections`);
  ok(upstream.versions.length >= 65, `${upstream.versions.length} requests`);
  ok(upstream.versions.every((v) => v === "2.0"), upstream.versions.join());
});

Deno.test("http2: a server that speaks only HTTP/2 works", async () => {
  const handler = sdkHandler({ lean: true });
  await using upstream = await serveHttp2((request) => handler.fetch(request), tls);
  try {
    await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url]);
    ok("result" in await bridge.initialize(), bridge.stderr);
    await bridge.request(1, "tools/call", { name: "echo", arguments: { text: "h2 only" } });
    deepStrictEqual((await bridge.response(1)).result, {
      content: [{ type: "text", text: "h2 only" }],
    });
    strictEqual(await bridge.exit(), 0);
  } finally {
    await handler.close();
  }
  ok(upstream.versions.every((v) => v === "2.0"), upstream.versions.join());
});

Deno.test("http2: a TLS server that refuses HTTP/2 is spoken to over HTTP/1.1", async () => {
  const handler = sdkHandler({ lean: true });
  await using upstream = await serveHttp2((request) => handler.fetch(request), {
    ...tls,
    http1Only: true,
  });
  try {
    await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url]);
    ok("result" in await bridge.initialize(), bridge.stderr);
    for (let id = 1; id <= 8; id++) {
      await bridge.request(id, "tools/call", { name: "echo", arguments: { text: `n${id}` } });
    }
    for (let id = 1; id <= 8; id++) {
      deepStrictEqual((await bridge.response(id)).result, {
        content: [{ type: "text", text: `n${id}` }],
      });
    }
    strictEqual(await bridge.exit(), 0);
  } finally {
    await handler.close();
  }
  ok(upstream.versions.length >= 9, `${upstream.versions.length} requests`);
  ok(upstream.versions.every((v) => v === "1.1"), upstream.versions.join());
});

Deno.test("http: localhost reaches a server bound to 127.0.0.1 only", async () => {
  await using upstream = serveMcp((m) =>
    m.method === "tools/call" ? result(m, { content: [{ type: "text", text: "v4" }] }) : undefined
  );
  const url = new URL(upstream.url);
  url.hostname = "localhost";
  await using bridge = new BridgeProcess([url.href]);
  ok("result" in await bridge.initialize(), bridge.stderr);
  await bridge.request(1, "tools/call", { name: "x", arguments: {} });
  deepStrictEqual((await bridge.response(1)).result, { content: [{ type: "text", text: "v4" }] });
  strictEqual(await bridge.exit(), 0);
  ok(upstream.seen.length >= 2);
});
