/**
 * The link of an upstream server of revision 2025-11-25 at a URL, in the
 * same process against a raw server on 127.0.0.1: the session of
 * initialize, MCP-Protocol-Version once the initialize result names it, the
 * GET stream after notifications/initialized, the DELETE of the session at
 * the close; a status fails its request only; a 404 for the session ends the
 * link (`closed`). tests/process/passthrough_http_test.ts runs the program.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { connectLegacyHttp } from "../../lib/legacy/http_link.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import type { UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { waitFor } from "../wait.ts";
import { serveLegacy, SESSION } from "../fixtures/legacy_http_server.ts";

const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

async function open(url: string): Promise<{ link: UpstreamLink; frames: UpstreamFrame[] }> {
  const link = await connectLegacyHttp({
    url: new URL(url),
    headers: [["x-key", "k"]],
    maxResponseBytes: 1 << 20,
  });
  const frames: UpstreamFrame[] = [];
  void link.read((frame) => void frames.push(frame));
  return { link, frames };
}

const call = (link: UpstreamLink, id: number, name: string) =>
  link.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

Deno.test("legacy HTTP link: the session and protocol version after initialize, the GET stream, the DELETE at the close", async () => {
  await using server = serveLegacy();
  const { link, frames } = await open(server.url);
  strictEqual(link.isRemote, true);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await call(link, 2, "echo");
  await waitFor("the call's result", () => frames.length === 2);
  deepStrictEqual(frames[1], {
    kind: "message",
    value: { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "called echo" }] } },
  });
  await waitFor("the GET stream", () => server.requests.some((r) => r.method === "GET"));
  const [init, ...later] = server.requests.filter((r) => r.method === "POST");
  strictEqual(init!.headers.get("mcp-session-id"), null);
  ok(server.requests.every((r) => r.headers.get("x-key") === "k"), "the headers of --header-env");
  for (const request of later) {
    strictEqual(request.headers.get("mcp-session-id"), SESSION);
    strictEqual(request.headers.get("mcp-protocol-version"), "2025-06-18");
  }
  await link.close();
  const deletes = server.requests.filter((r) => r.method === "DELETE");
  deepStrictEqual(deletes.map((r) => r.headers.get("mcp-session-id")), [SESSION]);
  deepStrictEqual(await link.ended, { kind: "closed" });
  await rejects(call(link, 3, "echo"), UpstreamFailure);
});

Deno.test("legacy HTTP link: a status fails its request only, without the body; a 404 for the session ends the link", async () => {
  await using server = serveLegacy();
  const { link, frames } = await open(server.url);
  await link.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await waitFor("the initialize result", () => frames.length === 1);
  await call(link, 2, "fail");
  await waitFor("the failure", () => frames.length === 2);
  const failed = frames[1] as { kind: string; id: unknown; failure: UpstreamFailure };
  deepStrictEqual([failed.kind, failed.id, failed.failure.kind, failed.failure.status], [
    "failed",
    2,
    "transport_failed",
    500,
  ]);
  ok(!JSON.stringify({ ...failed.failure, m: failed.failure.message }).includes("s3cret"));
  // The link goes on after a failed request.
  await call(link, 3, "expire");
  await waitFor("the result", () => frames.length === 3);
  strictEqual((frames[2] as { kind: string }).kind, "message");
  await call(link, 4, "echo");
  await waitFor("the end of the session", () => frames.length === 4);
  const lost = frames[3] as { kind: string; id: unknown; failure: UpstreamFailure };
  deepStrictEqual([lost.kind, lost.id, lost.failure.kind, lost.failure.status], [
    "failed",
    4,
    "closed",
    404,
  ]);
  deepStrictEqual(await link.ended, { kind: "closed" });
  await link.close();
});
