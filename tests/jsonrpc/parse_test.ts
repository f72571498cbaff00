import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { classify, nestingDepth, parseLine } from "../../lib/jsonrpc/parse.ts";
import type { Json } from "../../lib/jsonrpc/message.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { DENO, ROOT } from "../process/helpers.ts";

const enc = new TextEncoder();

Deno.test("parse accepts 64 levels and refuses 65 as too_deep", () => {
  const ok = "[".repeat(64) + "]".repeat(64);
  strictEqual(parseLine(enc.encode(ok)).ok, true);
  deepStrictEqual(parseLine(enc.encode("[".repeat(65) + "]".repeat(65))), {
    ok: false,
    cause: "too_deep",
  });
});

Deno.test("parse fails fast on hostile nesting without recursion", () => {
  const hostile = enc.encode("[".repeat(10_000_000));
  deepStrictEqual(parseLine(hostile), { ok: false, cause: "too_deep" });
});

Deno.test("nesting depth ignores brackets inside strings and escaped quotes", () => {
  strictEqual(nestingDepth(enc.encode('{"a":"[[[\\"{{{","b":[1]}'), 64), 2);
});

Deno.test("invalid UTF-8 and invalid JSON are parse_error", () => {
  deepStrictEqual(parseLine(new Uint8Array([0x7b, 0xff, 0x7d])), {
    ok: false,
    cause: "parse_error",
  });
  deepStrictEqual(parseLine(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22])), {
    ok: false,
    cause: "parse_error",
  });
  deepStrictEqual(parseLine(enc.encode("{nope}")), { ok: false, cause: "parse_error" });
});

const cases: [string, Json, ReturnType<typeof classify>][] = [
  ["request", { jsonrpc: "2.0", id: 1, method: "ping" }, {
    kind: "request",
    id: 1,
    method: "ping",
    params: undefined,
  }],
  ["string id", { jsonrpc: "2.0", id: "a", method: "m", params: {} }, {
    kind: "request",
    id: "a",
    method: "m",
    params: {},
  }],
  ["notification", { jsonrpc: "2.0", method: "n" }, {
    kind: "notification",
    method: "n",
    params: undefined,
  }],
  ["fractional id", { jsonrpc: "2.0", id: 1.5, method: "m" }, { kind: "invalid", replyId: null }],
  ["null id request", { jsonrpc: "2.0", id: null, method: "m" }, {
    kind: "invalid",
    replyId: null,
  }],
  ["object id request", { jsonrpc: "2.0", id: {}, method: "m" }, {
    kind: "invalid",
    replyId: null,
  }],
  ["no jsonrpc", { id: 3, method: "m" }, { kind: "invalid", replyId: 3 }],
  ["method not a string", { jsonrpc: "2.0", id: 3, method: 1 }, { kind: "invalid", replyId: 3 }],
  ["array", [1], { kind: "invalid", replyId: null }],
  ["scalar", 5, { kind: "invalid", replyId: null }],
  ["response null id", { jsonrpc: "2.0", id: null, result: {} }, {
    kind: "invalid",
    replyId: undefined,
  }],
  ["error without id", { jsonrpc: "2.0", error: { code: 1, message: "x" } }, {
    kind: "invalid",
    replyId: undefined,
  }],
  ["response bad id", { jsonrpc: "2.0", id: true, result: {} }, {
    kind: "invalid",
    replyId: undefined,
  }],
  ["object with id only", { jsonrpc: "2.0", id: 9 }, { kind: "invalid", replyId: 9 }],
];

for (const [name, value, expected] of cases) {
  Deno.test(`classify: ${name}`, () => {
    const got = classify(value);
    if (got.kind === "response") deepStrictEqual({ kind: got.kind, id: got.id }, expected);
    else deepStrictEqual(got, expected);
  });
}

Deno.test("classify: a response keeps its message", () => {
  const got = classify({ jsonrpc: "2.0", id: "b-1", result: { x: 1 } });
  strictEqual(got.kind, "response");
});

Deno.test("decodeLine: invalid bytes are undefined, a real U+FFFD is text, a BOM stays", async () => {
  const { decodeLine } = await import("../../lib/jsonrpc/parse.ts");
  strictEqual(decodeLine(new Uint8Array([0x22, 0xff, 0x22])), undefined);
  strictEqual(decodeLine(new Uint8Array([0x22, 0xe2, 0x82, 0x22])), undefined); // cut short
  strictEqual(decodeLine(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22])), undefined); // surrogate
  strictEqual(decodeLine(enc.encode('"\ufffd é"')), '"\ufffd é"');
  strictEqual(decodeLine(enc.encode("\ufeff{}")), "\ufeff{}");
  // A U+FFFD next to invalid bytes is still invalid.
  strictEqual(decodeLine(new Uint8Array([...enc.encode("\ufffd"), 0xc0])), undefined);
});

Deno.test("nesting depth: backslashes before a quote, and an open string", () => {
  strictEqual(nestingDepth(enc.encode('["a\\\\",["b\\\\\\"]"]]'), 64), 2);
  strictEqual(nestingDepth(enc.encode('[["\\\\"]]'), 64), 2);
  strictEqual(nestingDepth(enc.encode('[["open'), 64), 2);
});

Deno.test("upstream lines: 2,000 levels pass, 2,001 are too deep", async () => {
  const { UPSTREAM_MAX_DEPTH } = await import("../../lib/jsonrpc/parse.ts");
  strictEqual(UPSTREAM_MAX_DEPTH, 2_000);
  const at = (d: number) => enc.encode("[".repeat(d) + "]".repeat(d));
  strictEqual(parseLine(at(2_000), UPSTREAM_MAX_DEPTH).ok, true);
  deepStrictEqual(parseLine(at(2_001), UPSTREAM_MAX_DEPTH), { ok: false, cause: "too_deep" });
});

// The depth limit of the client on the wire: the bridge of the command line in process.

const HOSTILE_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/hostile_server.ts`];
const LARGE_PAD = 1_200_000; // makes the line larger than 1 MiB: the sliced path

function errorData(msg: Record<string, unknown> | null): unknown {
  return (msg?.error as { data?: unknown } | undefined)?.data;
}

Deno.test("a client line nested 1,000 / 10,000 / 100,000 deep gets too_deep first, small or large", async () => {
  await using bridge = new InProcessBridge([], HOSTILE_SERVER);
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
