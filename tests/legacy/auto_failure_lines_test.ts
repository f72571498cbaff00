/**
 * `--protocol auto`'s Output channel (issue 36): with an upstream server of
 * revision 2025-11-25 (the pass-through), each failed request whose message
 * sends the user to the Output channel has its line, with the method, the
 * id, the cause and what the transport saw; never the URL, a header, a token
 * or a body of the server. Over stdio (`legacy_raw_server.ts`) and over
 * HTTP (`legacy_http_server.ts`), through the real start-up of the bridge
 * in process. Over HTTP there is no process: no upstream_exited; a server
 * that went away is a transport failure there, a session that it ended
 * (404) is closed. A failed initialize has the start's line, with what the
 * transport saw.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { serveRaw } from "../fixtures/http_upstream.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { DENO, ROOT } from "../process/helpers.ts";

const LEGACY_RAW = [DENO, "run", "-A", `${ROOT}tests/fixtures/legacy_raw_server.ts`];

/** A call, the cause of its error, and what follows the cause on its line (a prefix). */
interface Case {
  readonly name: string;
  readonly cause: string;
  readonly rest: string;
}

/** Calls each tool of `cases` in order; each fails with its cause and has its one line. */
async function eachHasItsLine(bridge: InProcessBridge, cases: readonly Case[]): Promise<void> {
  for (const { name, cause, rest } of cases) {
    await bridge.request(name, "tools/call", { name, arguments: {} });
    const error = (await bridge.response(name)).error as { data?: { cause?: string } };
    strictEqual(error.data?.cause, cause, name);
    const mine = bridge.logs.filter((line) => line.includes(`(request "${name}") failed`));
    strictEqual(mine.length, 1, `${name}:\n${bridge.stderr}`);
    const head = `[mcp-bridge-vscode] warn: tools/call (request "${name}") failed: ${cause}`;
    ok(mine[0]!.startsWith(head + rest), `${name}: ${mine[0]}`);
  }
}

/** The failures of a response, then the end of the child in one of two ways. */
const STDIO_CASES: readonly Case[] = [
  { name: "bad_error", cause: "rpc", rest: "\n" },
  { name: "no_result", cause: "invalid_response", rest: "\n" },
  { name: "not_json", cause: "invalid_response", rest: "\n" },
  { name: "slow", cause: "timeout", rest: ": method: tools/call, limit: 300 ms\n" },
];
const STDIO_ENDS: readonly (readonly Case[])[] = [
  [
    { name: "die", cause: "upstream_exited", rest: "\n" },
    { name: "after", cause: "upstream_exited", rest: "\n" },
  ],
  [
    { name: "close_stdout", cause: "closed", rest: "\n" },
    { name: "after", cause: "closed", rest: "\n" },
  ],
];

for (const end of STDIO_ENDS) {
  Deno.test(`--protocol auto over stdio: each failure that names the Output channel has its line: an error without an error object, a response without a result, a line that is not JSON, a time limit, ${end[0]!.name}, a request after it`, async () => {
    await using bridge = new InProcessBridge(["--protocol", "auto"], LEGACY_RAW, {
      limits: { long_round_timeout_ms: 300 },
    });
    await bridge.initialize();
    await eachHasItsLine(bridge, [...STDIO_CASES, ...end]);
  });
}

const enc = new TextEncoder();
const SECRET = "tok-5ecret-77";

/** The server of the HTTP cases: each tool name fails in its own way. */
function failingServer() {
  const stream = (start: (c: ReadableStreamDefaultController<Uint8Array>) => void) =>
    new Response(new ReadableStream<Uint8Array>({ start }), {
      headers: { "content-type": "text/event-stream" },
    });
  const json = (body: string) =>
    new Response(body, { headers: { "content-type": "application/json" } });
  return serveLegacy({
    tool: (name, id) => {
      switch (name) {
        case "not_json":
          return json(`not json ${SECRET}`);
        case "no_result":
          return json(JSON.stringify({ jsonrpc: "2.0", id }));
        case "bad_error":
          return json(JSON.stringify({ jsonrpc: "2.0", id, error: "not an error object" }));
        case "html":
          return new Response(`<html>${SECRET}</html>`, {
            headers: { "content-type": "text/html" },
          });
        case "schema":
          // Valid JSON-RPC for the bridge, but the transport's schema refuses the params.
          return json(JSON.stringify([
            { jsonrpc: "2.0", method: "notifications/message", params: 5 },
            { jsonrpc: "2.0", id, result: {} },
          ]));
        case "slow":
          // A stream that sends nothing: the bridge cancels it at the limit.
          return stream(() => {});
        case "cut":
          return stream((c) => {
            c.enqueue(enc.encode(": open\n\n"));
            setTimeout(() => c.error(new Error("cut")), 20);
          });
      }
      // "fail" gets a 500 whose body is "upstream body s3cret"; "expire" ends the session.
      return undefined;
    },
  });
}

const HTTP_CASES: readonly Case[] = [
  { name: "not_json", cause: "invalid_response", rest: ": HTTP status 200\n" },
  { name: "no_result", cause: "invalid_response", rest: ": HTTP status 200\n" },
  { name: "bad_error", cause: "invalid_response", rest: ": HTTP status 200\n" },
  { name: "html", cause: "invalid_response", rest: ": HTTP status 200\n" },
  { name: "schema", cause: "invalid_response", rest: "\n" },
  { name: "slow", cause: "timeout", rest: ": method: tools/call, limit: 300 ms\n" },
  {
    name: "cut",
    cause: "transport_failed",
    rest: ": HTTP status 200 [the connection failed during the body of the response]\n",
  },
  // The server's body of the 500 stays out.
  { name: "fail", cause: "transport_failed", rest: ": HTTP status 500\n" },
];

/**
 * The end of the link: the server goes away (no connection), or a call of
 * the tool "expire" (its result comes) ends the session (each later request: 404).
 */
const HTTP_ENDS = [
  {
    what: "a server that went away",
    end: "close",
    last: { name: "away", cause: "transport_failed", rest: " [" },
  },
  {
    what: "a session that the server ended",
    end: "expire",
    last: { name: "after", cause: "closed", rest: ": HTTP status 404\n" },
  },
] as const;

for (const end of HTTP_ENDS) {
  Deno.test(`--protocol auto over HTTP: each failure that names the Output channel has its line, with what the transport saw: a body that is not JSON, not a JSON-RPC message (an error that is not an error object too: the transport's schema refuses it) or of another media type, a time limit, a body cut, a status, ${end.what}; never the URL, a header or a body`, async () => {
    const server = failingServer();
    try {
      await using bridge = new InProcessBridge(
        ["--protocol", "auto", "--allow-http", "--header-env", "Authorization=AUTH"],
        server.url,
        { limits: { long_round_timeout_ms: 300 }, env: { AUTH: `Bearer ${SECRET}` } },
      );
      await bridge.initialize();
      await eachHasItsLine(bridge, HTTP_CASES);
      if (end.end === "close") await server.close();
      else {
        await bridge.request("expire", "tools/call", { name: "expire", arguments: {} });
        ok("result" in await bridge.response("expire"));
      }
      await eachHasItsLine(bridge, [end.last]);
      const lines = bridge.logs.filter((line) => line.includes(" failed: "));
      deepStrictEqual(lines.length, HTTP_CASES.length + 1, bridge.stderr);
      for (const secret of [SECRET, "s3cret", server.url, `:${server.port}`]) {
        ok(!bridge.stderr.includes(secret), `${secret} in the log:\n${bridge.stderr}`);
      }
    } finally {
      await server.close();
    }
  });
}

Deno.test("--protocol auto over HTTP: the line of an initialize whose body the network cut says what the transport saw", async () => {
  await using server = serveRaw((_request, body) => {
    const { method } = JSON.parse(body) as { method?: string };
    if (method === "initialize") {
      return new Response(
        new ReadableStream<Uint8Array>({
          start: (c) => {
            c.enqueue(enc.encode(": open\n\n"));
            setTimeout(() => c.error(new Error("cut")), 20);
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    // The v1 SDK's answer to a request without a session: an older server.
    return Response.json({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: "Bad Request: Server not initialized" },
    }, { status: 400 });
  });
  await using bridge = new InProcessBridge(["--protocol", "auto", "--allow-http"], server.url);
  await bridge.request(1, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  });
  const error = (await bridge.response(1)).error as { data?: { cause?: string } };
  strictEqual(error.data?.cause, "transport_failed", JSON.stringify(error));
  const line = "[mcp-bridge-vscode] error: the upstream initialize failed: transport_failed: " +
    "HTTP status 200 [the connection failed during the body of the response]\n";
  ok(bridge.logs.includes(line), bridge.stderr);
});
