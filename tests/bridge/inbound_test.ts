import { deepStrictEqual } from "node:assert/strict";
import { readClientFrame } from "../../lib/bridge/inbound.ts";
import { logMessageFor } from "../../lib/bridge/logging.ts";
import type { Frame } from "../../lib/jsonrpc/framer.ts";

const enc = new TextEncoder();
const LIMITS = { max_line_bytes: 100, max_depth: 64 };
const line = (text: string): Frame => ({ kind: "line", bytes: enc.encode(text) });

function summary(frame: Frame): unknown {
  const inbound = readClientFrame(frame, LIMITS, "b-");
  switch (inbound.kind) {
    case "reject":
      return ["reject", inbound.id, (inbound.error.data as { cause: string }).cause];
    case "answer":
      return ["answer", inbound.id, inbound.answer.kind];
    case "request":
      return ["request", inbound.id, inbound.method];
    case "notification":
      return ["notification", inbound.method];
    case "drop":
      return ["drop"];
  }
}

const cases: [string, Frame, unknown][] = [
  ["request", line('{"jsonrpc":"2.0","id":1,"method":"ping"}'), ["request", 1, "ping"]],
  ["notification", line('{"jsonrpc":"2.0","method":"n"}'), ["notification", "n"]],
  ["answer", line('{"jsonrpc":"2.0","id":"b-1","result":{}}'), ["answer", "b-1", "result"]],
  ["error answer", line('{"jsonrpc":"2.0","id":"b-2","error":{"code":1,"message":"m"}}'), [
    "answer",
    "b-2",
    "error",
  ]],
  ["invalid answer", line('{"jsonrpc":"2.0","id":"b-3",'), ["answer", "b-3", "invalid"]],
  [
    "bad-shape answer",
    line('{"jsonrpc":"2.0","id":"b-4","result":1,"error":{"code":1,"message":"m"}}'),
    [
      "answer",
      "b-4",
      "invalid",
    ],
  ],
  ["unknown response", line('{"jsonrpc":"2.0","id":7,"result":{}}'), ["drop"]],
  ["parse error", line('{"id":5,'), ["reject", 5, "parse_error"]],
  ["too deep", line(`{"id":"d","p":${"[".repeat(70)}${"]".repeat(70)}}`), [
    "reject",
    "d",
    "too_deep",
  ]],
  ["too long, id in the tail", {
    kind: "too_long",
    head: enc.encode('{"method":"x","params":{"a":"aaaa'),
    tail: enc.encode('aaaa"},"jsonrpc":"2.0","id":42}'),
    length: 1000,
  }, ["reject", 42, "line_too_long"]],
  ["too long, bridge id", {
    kind: "too_long",
    head: enc.encode('{"id":"b-9","result":'),
    tail: enc.encode("}"),
    length: 1000,
  }, [
    "answer",
    "b-9",
    "invalid",
  ]],
];
for (const [name, frame, expected] of cases) {
  Deno.test(`client frame: ${name}`, () => deepStrictEqual(summary(frame), expected));
}

Deno.test("log messages: none without a level of the client or below it; no upstream _meta", () => {
  const params = { level: "warning", logger: "l", data: { a: 1 }, _meta: { x: 1 } };
  deepStrictEqual(logMessageFor(params, undefined), undefined);
  deepStrictEqual(logMessageFor(params, "error"), undefined);
  deepStrictEqual(logMessageFor(params, "info"), { level: "warning", data: { a: 1 }, logger: "l" });
  deepStrictEqual(logMessageFor({ level: "loud", data: 1 }, "debug"), undefined);
});
