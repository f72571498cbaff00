/**
 * One message of the upstream server from its bytes (lib/upstream/decode.ts)
 * on the wire: the bridge of the command line in process in front of raw
 * upstream children. A result nested deeper than the bridge can write fails
 * only its own request; a large result keeps every byte and every rule.
 */

import { decodeUpstream } from "../../lib/upstream/decode.ts";
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { LONG_ICON, LONG_TEXT } from "../fixtures/large_server.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { DENO, ROOT } from "../process/helpers.ts";

const HOSTILE_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/hostile_server.ts`];
const LARGE_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/large_server.ts`];
const LARGE_PAD = 1_200_000; // makes the line larger than 1 MiB: the sliced path
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

function errorData(msg: Record<string, unknown> | null): unknown {
  return (msg?.error as { data?: unknown } | undefined)?.data;
}

function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

async function call(bridge: InProcessBridge, id: number, name: string) {
  await bridge.request(id, "tools/call", { name, arguments: {} });
  const msg = await bridge.next(30_000);
  strictEqual(msg?.id, id);
  return msg!;
}

Deno.test("an upstream result nested 1,000 / 10,000 / 100,000 deep, in a small and a large line", async () => {
  await using bridge = new InProcessBridge([], HOSTILE_SERVER);
  await bridge.initialize();
  let id = 0;
  for (const pad of [10, LARGE_PAD]) {
    for (const objects of [false, true]) {
      for (const depth of [1_000, 10_000, 100_000]) {
        const what = `depth ${depth}, pad ${pad}, ${objects ? "objects" : "arrays"}`;
        await bridge.request(++id, "tools/call", {
          name: "deep",
          arguments: { depth, pad, objects },
        });
        const msg = await bridge.response(id, 20_000);
        if (depth === 1_000) {
          const result = msg.result as { structuredContent: unknown; content: { text: string }[] };
          strictEqual(result.content[0]!.text.length, pad, what);
          if (!objects) deepStrictEqual(result.structuredContent, nested(depth), what);
        } else {
          deepStrictEqual(
            [(msg.error as { code: number }).code, errorData(msg)],
            [-32603, { cause: "invalid_response" }],
            what,
          );
        }
        // The session goes on.
        await bridge.request(`ping-${id}`, "ping");
        deepStrictEqual((await bridge.response(`ping-${id}`)).result, {});
      }
    }
  }
  strictEqual(await bridge.exit(), 0);
});

Deno.test("a large result: long strings come back whole, modern members go, the rules apply", async () => {
  await using bridge = new InProcessBridge([], LARGE_SERVER);
  await bridge.request(1, "initialize", INIT);
  strictEqual((await bridge.next())?.id, 1);

  const text = await call(bridge, 2, "text");
  deepStrictEqual(text.result, {
    content: [
      { type: "text", text: LONG_TEXT },
      {
        type: "resource_link",
        uri: "file:///a",
        name: "a",
        icons: [{ src: LONG_ICON }, { src: "https://example.com/i.png" }],
      },
    ],
  });

  // The text mirror of a large structuredContent has the long string whole.
  const structured = await call(bridge, 3, "structured");
  deepStrictEqual(structured.result, {
    structuredContent: { blob: LONG_TEXT },
    content: [{ type: "text", text: JSON.stringify({ blob: LONG_TEXT }) }],
  });

  // A long string that JSON.parse would refuse fails only its own request.
  for (const [id, name] of [[4, "bad_utf8"], [5, "control"]] as const) {
    const bad = await call(bridge, id, name);
    strictEqual((bad.error as { data: { cause: string } }).data.cause, "invalid_response");
  }
  await bridge.request(6, "ping");
  deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 6, result: {} });
});

Deno.test("decodeUpstream: a message from its bytes; what is not a message is nothing", () => {
  const bytes = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"result":{}}');
  strictEqual(decodeUpstream(bytes)?.id, 1);
  strictEqual(decodeUpstream(new TextEncoder().encode("[1]")), undefined);
});
