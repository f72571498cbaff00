/**
 * A raw upstream server of revision 2025-11-25 at a URL, on 127.0.0.1, for the
 * tests of the link of that revision in the same process: a session from
 * initialize, 405 for the GET stream, each request kept with its method and
 * headers, and tools that fail with a status or expire the session.
 */

import { serveRaw, type Upstream } from "../fixtures/http_upstream.ts";

/** The session id that initialize gives. */
export const SESSION = "sess-0123";

/** A request that the server saw. */
export interface LegacyRequest {
  readonly method: string;
  readonly headers: Headers;
  readonly message: Record<string, unknown> | undefined;
}

/** The server and what it saw. */
export interface LegacyHttpServer extends Upstream {
  readonly requests: LegacyRequest[];
}

/**
 * Serves revision 2025-11-25: a request other than initialize without the
 * session gets the v1 SDK's 400 (the sign of an older server); tools/call of
 * `fail` gets HTTP 500, of `expire` ends the session (each later request gets
 * 404); another name gets a text.
 */
export function serveLegacy(): LegacyHttpServer {
  const requests: LegacyRequest[] = [];
  let expired = false;
  const upstream = serveRaw((request, body) => {
    const message = body === "" ? undefined : JSON.parse(body) as Record<string, unknown>;
    requests.push({ method: request.method, headers: request.headers, message });
    if (request.method === "GET") return new Response(null, { status: 405 });
    if (request.method === "DELETE") return new Response(null, { status: 200 });
    const { id, method } = message!;
    if (method === "initialize") {
      return Response.json({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "raw-http", version: "1" },
        },
      }, { headers: { "mcp-session-id": SESSION } });
    }
    if (request.headers.get("mcp-session-id") !== SESSION) {
      return Response.json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Bad Request: Server not initialized" },
        id: null,
      }, { status: 400 });
    }
    if (expired) {
      return Response.json({
        jsonrpc: "2.0",
        error: { code: -32001, message: "Session not found" },
        id: null,
      }, { status: 404 });
    }
    if (id === undefined) return new Response(null, { status: 202 });
    const name = (message!.params as { name?: string } | undefined)?.name;
    if (name === "fail") return new Response("upstream body s3cret", { status: 500 });
    if (name === "expire") expired = true;
    return Response.json({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "text", text: `called ${name}` }] },
    });
  });
  return { ...upstream, requests };
}
