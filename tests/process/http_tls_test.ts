/**
 * TLS with a CA made in the test (refused without --ca-file, working with
 * it) and a CONNECT proxy on loopback (used through HTTPS_PROXY, bypassed
 * through NO_PROXY).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { result, serveMcp } from "../fixtures/http_raw.ts";
import { makeCertificates, serveConnectProxy } from "../fixtures/http_tls.ts";
import { BridgeProcess } from "./helpers.ts";

const certificates = await makeCertificates();
const tls = { cert: certificates.cert, key: certificates.key };
const echo = (m: { method?: string; id?: unknown }) =>
  m.method === "tools/call"
    ? result(m, { content: [{ type: "text", text: "over tls" }] })
    : undefined;

Deno.test("tls: an upstream with a certificate of a test CA is refused without --ca-file", async () => {
  await using upstream = serveMcp(echo, undefined, undefined, tls);
  await using bridge = new BridgeProcess([upstream.url]);
  const init = await bridge.initialize();
  deepStrictEqual((init.error as { data: unknown }).data, {
    cause: "discover_failed",
    detail: "the connection failed",
  });
  strictEqual(upstream.seen.length, 0);
  strictEqual(await bridge.exit(), 0);
});

Deno.test("tls: with --ca-file the same upstream works", async () => {
  await using upstream = serveMcp(echo, undefined, undefined, tls);
  await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url]);
  ok("result" in await bridge.initialize(), bridge.stderr);
  await bridge.request(1, "tools/call", { name: "x", arguments: {} });
  deepStrictEqual((await bridge.response(1)).result, {
    content: [{ type: "text", text: "over tls" }],
  });
  strictEqual(await bridge.exit(), 0);
});

Deno.test("proxy: HTTPS_PROXY carries the requests through a CONNECT tunnel; NO_PROXY bypasses it", async () => {
  await using upstream = serveMcp(echo, undefined, undefined, tls);
  await using proxy = serveConnectProxy();
  {
    await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url], {
      HTTPS_PROXY: proxy.url,
    });
    ok("result" in await bridge.initialize(), bridge.stderr);
    await bridge.request(1, "tools/call", { name: "x", arguments: {} });
    ok("result" in await bridge.response(1));
    strictEqual(await bridge.exit(), 0);
  }
  ok(proxy.tunnels.length >= 1, "the proxy saw a tunnel");
  ok(proxy.tunnels.every((t) => t === `127.0.0.1:${upstream.port}`), proxy.tunnels.join());
  const before = proxy.tunnels.length;
  const seen = upstream.seen.length;
  {
    await using bridge = new BridgeProcess(["--ca-file", certificates.caFile, upstream.url], {
      HTTPS_PROXY: proxy.url,
      NO_PROXY: "127.0.0.1",
    });
    ok("result" in await bridge.initialize(), bridge.stderr);
    strictEqual(await bridge.exit(), 0);
  }
  strictEqual(proxy.tunnels.length, before, "NO_PROXY bypassed the proxy");
  ok(upstream.seen.length > seen);
});

Deno.test("tls: a --ca-file without a valid certificate is exit 2", async () => {
  const bad = `${certificates.dir}/bad.pem`;
  await Deno.writeTextFile(bad, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  await using bridge = new BridgeProcess(["--ca-file", bad, "https://127.0.0.1:9/mcp"]);
  strictEqual(await bridge.exit(), 2);
  ok(bridge.stderr.includes(bad), bridge.stderr);
});
