/**
 * The real program in front of a raw HTTP/1.1 upstream on 127.0.0.1
 * (`serveTcp`: the test writes the bytes) whose 200 responses the network
 * cuts before the response message arrived: the connection closes after the
 * headers, in the middle of a chunked stream after some events, or before a
 * JSON body's Content-Length. A repeatable request (a list, a tool that the
 * last tools/list marked read-only or idempotent) goes once more, unless the
 * client already got something of it; every other request fails once with
 * its cause, and the server counts each run: none runs twice. Each failure is
 * one line of the log (never the URL or a header), each resend a debug line.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  DISCOVER_RESULT,
  jsonResponse,
  type RawConnection,
  serveTcp,
} from "../fixtures/raw_tcp.ts";
import { BridgeProcess } from "./helpers.ts";

type Obj = Record<string, unknown>;

const enc = new TextEncoder();

/** How the first answer to a request is cut. */
type Cut =
  /** The connection closes before any byte of a response. */
  | "close"
  /** The SSE headers, then the connection closes. */
  | "sse_head"
  /** A chunked SSE stream: a progress event, then the connection closes mid-stream. */
  | "sse_progress"
  /** A chunked SSE stream that ends (its last chunk) without the response. */
  | "sse_end"
  /** A JSON body that the connection cuts before its Content-Length. */
  | "json";

const TOOLS = [
  { name: "read", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  { name: "same", inputSchema: { type: "object" }, annotations: { idempotentHint: true } },
  { name: "write", inputSchema: { type: "object" } },
];

/** What the transport saw: the connection cut the body; the stream ended without the response. */
const BODY = "the connection failed during the body of the response";
const ENDED = "the stream ended before its response";

const SSE_HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" +
  "transfer-encoding: chunked\r\n\r\n";

/** One chunk of a chunked body. */
function chunk(text: string): string {
  return `${enc.encode(text).length.toString(16)}\r\n${text}\r\n`;
}

function event(message: unknown): string {
  return chunk(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/** Writes the cut answer `cut` to the request `message`; false: the connection is closed now. */
async function writeCut(conn: RawConnection, cut: Cut, message: Obj): Promise<boolean> {
  const params = message.params as { _meta?: { progressToken?: unknown } } | undefined;
  switch (cut) {
    case "close":
      return false;
    case "sse_head":
      await conn.write(SSE_HEAD);
      return false;
    case "sse_progress":
      await conn.write(
        SSE_HEAD + event({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: params?._meta?.progressToken ?? 0, progress: 1 },
        }),
      );
      return false;
    case "sse_end":
      await conn.write(SSE_HEAD + chunk(": nothing\n\n") + "0\r\n\r\n");
      return true;
    case "json": {
      const body = JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { tools: [] } });
      await conn.write(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" +
          `content-length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
      );
      return false;
    }
  }
}

/**
 * A raw upstream: an attempt of a request that `cutOf` names (by its key and
 * the attempt's number, from 1) gets that cut, every other its answer. `runs` counts the POSTs of each key
 * (the method, or the tool and its `key` argument).
 */
function serveCuts(cutOf: (key: string, attempt: number) => Cut | undefined) {
  const runs = new Map<string, number>();
  const server = serveTcp(async (conn) => {
    for (;;) {
      const request = await conn.read();
      if (!request) return;
      const message = request.message ?? {};
      const params = (message.params ?? {}) as { name?: string; arguments?: { key?: string } };
      const key = message.method === "tools/call"
        ? `${params.name}:${params.arguments?.key}`
        : String(message.method);
      const n = (runs.get(key) ?? 0) + 1;
      runs.set(key, n);
      const cut = cutOf(key, n);
      if (cut) {
        if (!await writeCut(conn, cut, message)) return;
        continue;
      }
      if (message.id === undefined) {
        await conn.write("HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
        continue;
      }
      const result = message.method === "server/discover"
        ? DISCOVER_RESULT
        : message.method === "tools/list"
        ? { tools: TOOLS }
        : { content: [{ type: "text", text: key }] };
      await conn.write(jsonResponse({ jsonrpc: "2.0", id: message.id, result }));
    }
  });
  return { server, runs };
}

const ARGS = ["--log-level", "debug", "--header-env", "Authorization=TEST_TOKEN"];
const ENV = { TEST_TOKEN: "Bearer header-value-s3cr3t" };

function textOf(response: Obj): string | undefined {
  return (response.result as { content?: { text: string }[] } | undefined)?.content?.[0]?.text;
}

function dataOf(response: Obj): Obj | undefined {
  return (response.error as { data?: Obj } | undefined)?.data;
}

/** The lines of the log that hold `text`, without their time. */
function linesWith(bridge: BridgeProcess, text: string): string[] {
  return bridge.stderr.split("\n").filter((line) => line.includes(text)).map((line) =>
    line.replace(/^\[[^\]]*\] /, "")
  );
}

Deno.test("http cut body: a list and the calls of read-only and idempotent tools whose 200 is cut go once more; each runs twice at most", async () => {
  const cuts: Record<string, Cut[]> = {
    "tools/list": ["sse_head"],
    "read:a": ["sse_head"],
    "read:b": ["sse_end"],
    "same:c": ["json"],
  };
  const { server, runs } = serveCuts((key, n) => cuts[key]?.[n - 1]);
  await using _server = server;
  await using bridge = new BridgeProcess([...ARGS, server.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  strictEqual(((await bridge.response(1)).result as { tools: unknown[] }).tools.length, 3);
  const calls = [["read", "a"], ["read", "b"], ["same", "c"]] as const;
  for (const [n, [name, key]] of calls.entries()) {
    await bridge.request(n + 2, "tools/call", { name, arguments: { key } });
    strictEqual(textOf(await bridge.response(n + 2)), `${name}:${key}`, bridge.stderr);
  }
  deepStrictEqual(
    Object.fromEntries([...runs].filter(([key]) => key !== "server/discover")),
    { "tools/list": 2, "read:a": 2, "read:b": 2, "same:c": 2 },
  );
  strictEqual(linesWith(bridge, "failed:").length, 0, bridge.stderr);
  deepStrictEqual(linesWith(bridge, "sent once more"), [
    `debug: tools/list: sent once more after ${BODY}`,
    `debug: tools/call: sent once more after ${BODY}`,
    `debug: tools/call: sent once more after ${ENDED}`,
    `debug: tools/call: sent once more after ${BODY}`,
  ]);
  strictEqual(await bridge.exit(), 0);
  ok(!(bridge.stdout + bridge.stderr).includes("s3cr3t"));
  ok(!bridge.stderr.includes(server.url));
});

Deno.test("http cut body: a call that may change something fails once with transport_failed and runs once; a repeatable one fails once after its one resend, or at once after a progress", async () => {
  const cuts: Record<string, Cut[]> = {
    "write:a": ["sse_head"],
    "write:b": ["sse_progress"],
    "write:c": ["sse_end"],
    "write:d": ["json"],
    "read:p": ["sse_progress"],
    // The send policy sends it once more (a close before the response): no third send.
    "read:q": ["close", "sse_head"],
    // Cut twice: the one resend, then the failure.
    "read:r": ["sse_end", "sse_end"],
    // Cut, then closed before the response: the link's resend is the one resend.
    "read:s": ["sse_head", "close"],
  };
  const { server, runs } = serveCuts((key, n) => cuts[key]?.[n - 1]);
  await using _server = server;
  await using bridge = new BridgeProcess([...ARGS, server.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  await bridge.response(1);
  const keys = ["a", "b", "c", "d"];
  const failures: (Obj | undefined)[] = [];
  for (const [n, key] of keys.entries()) {
    await bridge.request(n + 2, "tools/call", {
      name: "write",
      arguments: { key },
      _meta: { progressToken: `t${n}` },
    });
    failures.push(dataOf(await bridge.response(n + 2)));
  }
  await bridge.request(9, "tools/call", {
    name: "read",
    arguments: { key: "p" },
    _meta: { progressToken: "tp" },
  });
  const read = await bridge.until(9);
  ok(read.some((m) => m.method === "notifications/progress"), JSON.stringify(read));
  failures.push(dataOf(read.at(-1)!));
  for (const [n, key] of ["q", "r", "s"].entries()) {
    await bridge.request(10 + n, "tools/call", { name: "read", arguments: { key } });
    failures.push(dataOf(await bridge.response(10 + n)));
  }
  // The last one's resend got no response: its failure has no status.
  deepStrictEqual(failures, [
    ...Array(7).fill({ cause: "transport_failed", detail: "HTTP status 200" }),
    { cause: "transport_failed" },
  ]);
  deepStrictEqual(
    Object.fromEntries([...runs].filter(([key]) => key.includes(":"))),
    {
      "write:a": 1,
      "write:b": 1,
      "write:c": 1,
      "write:d": 1,
      "read:p": 1,
      "read:q": 2,
      "read:r": 2,
      "read:s": 2,
    },
  );
  deepStrictEqual(linesWith(bridge, "failed:"), [
    `warn: tools/call (request 2) failed: transport_failed: HTTP status 200 [${BODY}]`,
    `warn: tools/call (request 3) failed: transport_failed: HTTP status 200 [${BODY}]`,
    `warn: tools/call (request 4) failed: transport_failed: HTTP status 200 [${ENDED}]`,
    `warn: tools/call (request 5) failed: transport_failed: HTTP status 200 [${BODY}]`,
    `warn: tools/call (request 9) failed: transport_failed: HTTP status 200 [${BODY}]`,
    `warn: tools/call (request 10) failed: transport_failed: HTTP status 200 [${BODY}]`,
    `warn: tools/call (request 11) failed: transport_failed: HTTP status 200 [${ENDED}]`,
    "warn: tools/call (request 12) failed: transport_failed [the connection closed before the response]",
  ]);
  deepStrictEqual(linesWith(bridge, "sent once more"), [
    "debug: tools/call: sent once more after the connection closed before the response",
    `debug: tools/call: sent once more after ${ENDED}`,
    `debug: tools/call: sent once more after ${BODY}`,
  ]);
  strictEqual(await bridge.exit(), 0);
  ok(!(bridge.stdout + bridge.stderr).includes("s3cr3t"));
  ok(!bridge.stderr.includes(server.url));
});

Deno.test("http cut body: --no-hinted-resend: the call of a read-only tool whose 200 is cut fails once; a list still goes once more", async () => {
  const cuts: Record<string, Cut[]> = { "tools/list": ["sse_end"], "read:a": ["sse_head"] };
  const { server, runs } = serveCuts((key, n) => cuts[key]?.[n - 1]);
  await using _server = server;
  await using bridge = new BridgeProcess([...ARGS, "--no-hinted-resend", server.url], ENV);
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  strictEqual(((await bridge.response(1)).result as { tools: unknown[] }).tools.length, 3);
  await bridge.request(2, "tools/call", { name: "read", arguments: { key: "a" } });
  deepStrictEqual(dataOf(await bridge.response(2)), {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  deepStrictEqual([runs.get("tools/list"), runs.get("read:a")], [2, 1]);
  deepStrictEqual(linesWith(bridge, "sent once more"), [
    `debug: tools/list: sent once more after ${ENDED}`,
  ]);
  deepStrictEqual(linesWith(bridge, "failed:"), [
    `warn: tools/call (request 2) failed: transport_failed: HTTP status 200 [${BODY}]`,
  ]);
  strictEqual(await bridge.exit(), 0);
});
