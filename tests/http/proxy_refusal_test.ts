import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import {
  isRefusalResponse,
  isTunnelRefusal,
  onceWarn,
  PROXY_REFUSED,
  refusalAware,
  refusalLine,
} from "../../lib/http/proxy_refusal.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { mapDiscoverFailure, mapUpstreamFailure } from "../../lib/errors/failures.ts";
import { refusingProxy } from "../fixtures/refusing_proxy.ts";

Deno.test("Deno's fetch through a proxy that refuses: CONNECT is an 'unsuccessful tunnel' error, a plain request the marked 403", async () => {
  const proxy = refusingProxy();
  const client = Deno.createHttpClient({ proxy: { url: proxy.url } });
  try {
    let error: unknown;
    try {
      await fetch("https://localhost:8443/mcp", { method: "POST", body: "{}", client });
    } catch (e) {
      error = e;
    }
    ok(error !== undefined, "the CONNECT failed the fetch");
    ok(isTunnelRefusal(error), String(error));
    const response = await fetch("http://localhost:8443/mcp", {
      method: "POST",
      body: "{}",
      client,
    });
    ok(isRefusalResponse(response));
    await response.body?.cancel();
    deepStrictEqual(proxy.refused, [
      "CONNECT localhost:8443 HTTP/1.1",
      "POST http://localhost:8443/mcp HTTP/1.1",
    ]);
  } finally {
    client.close();
    proxy.close();
  }
});

Deno.test("refusalAware: a refusal rejects with transport_failed and the proxy's detail, and warns once with the host", async () => {
  const warnings: string[] = [];
  const refused = onceWarn((line) => warnings.push(line), true);
  const tunnel = refusalAware((_url: URL, _init: RequestInit) => {
    throw new TypeError("fetch failed", {
      cause: new Error("client error (Connect): unsuccessful tunnel"),
    });
  }, refused);
  const marked = refusalAware(
    (_url: URL, _init: RequestInit) =>
      Promise.resolve(
        new Response("Connection blocked by network allowlist", {
          status: 403,
          headers: { "x-proxy-error": "blocked-by-allowlist" },
        }),
      ),
    refused,
  );
  const url = new URL("https://mcp.example.com/mcp/secret-path?key=secret");
  for (const [send, status] of [[tunnel, undefined], [marked, 403]] as const) {
    await rejects(send(url, {}), (error) => {
      ok(error instanceof UpstreamFailure);
      strictEqual(error.kind, "transport_failed");
      strictEqual(error.detail, PROXY_REFUSED);
      strictEqual(error.status, status);
      return true;
    });
  }
  deepStrictEqual(warnings, [refusalLine("mcp.example.com", true)]);
  ok(warnings[0]!.includes('add "mcp.example.com" to sandbox.network.allowedDomains'));
  ok(!warnings[0]!.includes("secret"), "no path or query");
  // The server's own 403 (no mark) and other errors pass unchanged.
  const own = refusalAware(
    (_url: URL, _init: RequestInit) => Promise.resolve(new Response(null, { status: 403 })),
    refused,
  );
  strictEqual((await own(url, {})).status, 403);
  const reset = refusalAware((_url: URL, _init: RequestInit) => {
    throw new TypeError("connection reset");
  }, refused);
  await rejects(reset(url, {}), (error) => error instanceof TypeError);
  strictEqual(warnings.length, 1);
});

Deno.test("a refusal of the proxy keeps the cause and says so in data.detail", () => {
  const connect = new UpstreamFailure("transport_failed", { detail: PROXY_REFUSED });
  const marked = new UpstreamFailure("transport_failed", { detail: PROXY_REFUSED, status: 403 });
  const discover = mapDiscoverFailure(connect, "120 s");
  strictEqual((discover.data as { cause: string }).cause, "discover_failed");
  strictEqual((discover.data as { detail: string }).detail, "the proxy refused the connection");
  const call = mapUpstreamFailure(marked, "tools/call", "120 s");
  strictEqual((call.data as { cause: string }).cause, "transport_failed");
  strictEqual(
    (call.data as { detail: string }).detail,
    "the proxy refused the connection (HTTP status 403)",
  );
});

Deno.test("outside the sandbox the warn line names the proxy variables, not mcp.json", () => {
  const line = refusalLine("mcp.example.com", false);
  ok(line.includes("mcp.example.com") && !line.includes("allowedDomains"), line);
});
