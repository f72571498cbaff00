/**
 * Deep nesting from either side never crashes the bridge: the client's
 * depth limit answers too_deep first; an upstream line deeper than the
 * bridge can write fails only its own request with invalid_response.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, DENO, ROOT } from "./helpers.ts";

const HOSTILE_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/hostile_server.ts`];
const LARGE_PAD = 1_200_000; // makes the line larger than 1 MiB: the sliced path

function errorData(msg: Record<string, unknown> | null): unknown {
  return (msg?.error as { data?: unknown } | undefined)?.data;
}

function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

Deno.test("an upstream result nested 1,000 / 10,000 / 100,000 deep, in a small and a large line", async () => {
  await using bridge = new BridgeProcess([], HOSTILE_SERVER);
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

Deno.test("a client line nested 1,000 / 10,000 / 100,000 deep gets too_deep first, small or large", async () => {
  await using bridge = new BridgeProcess([], HOSTILE_SERVER);
  await bridge.initialize();
  let id = 0;
  for (const pad of [10, LARGE_PAD]) {
    for (const depth of [1_000, 10_000, 100_000]) {
      const deep = "[".repeat(depth) + "]".repeat(depth);
      await bridge.writeRaw(
        `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":{"name":"deep",` +
          `"arguments":{"pad":"${"p".repeat(pad)}","v":${deep}}}}\n`,
      );
      const msg = await bridge.response(id, 20_000);
      deepStrictEqual(errorData(msg), { cause: "too_deep", detail: "limit: 64 levels" });
      // An id after the deep value is found too.
      await bridge.writeRaw(
        `{"jsonrpc":"2.0","method":"ping","params":{"v":${deep}},"id":"after-${id}"}\n`,
      );
      deepStrictEqual(errorData(await bridge.response(`after-${id}`, 20_000)), {
        cause: "too_deep",
        detail: "limit: 64 levels",
      });
    }
  }
  await bridge.request("last", "ping");
  deepStrictEqual((await bridge.response("last")).result, {});
  strictEqual(await bridge.exit(), 0);
});
