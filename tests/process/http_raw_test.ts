/**
 * The real program in front of a raw HTTP upstream on 127.0.0.1 whose bodies
 * are not valid, with debug logs and a secret header: every byte that the
 * process writes to stdout and stderr is scanned for the URL path, the query
 * and the header values. The other tests of the HTTP link run the bridge in
 * process (tests/upstream/).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { json, serveMcp } from "../fixtures/http_raw.ts";
import { BridgeProcess } from "./helpers.ts";

const SECRETS = ["secret-path", "sekrit-query", "header-value-s3cr3t"];

function assertNoSecret(bridge: BridgeProcess): void {
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
  await using bridge = new BridgeProcess([...ARGS, upstream.url], ENV);
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
