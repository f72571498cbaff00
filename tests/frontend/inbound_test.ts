import { deepStrictEqual } from "node:assert/strict";
import { readClientFrame } from "../../lib/frontend/inbound.ts";
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

Deno.test("requests keep the exact token of their id; a cancel of 2^53 + 1 keeps its token", async () => {
  const { isRawId } = await import("../../lib/jsonrpc/message.ts");
  for (const token of ["9007199254740993", "1e308", "-0", '"\\u0041"']) {
    for (
      const text of [
        `{"jsonrpc":"2.0","id":${token},"method":"ping"}`,
        `{"method":"ping","jsonrpc":"2.0","id":${token}}`,
        `{"method":"ping","params":{"id":1},"jsonrpc":"2.0","id":${token}}`,
      ]
    ) {
      const inbound = readClientFrame(line(text), LIMITS, "b-");
      deepStrictEqual(inbound.kind, "request", text);
      if (inbound.kind !== "request") continue;
      deepStrictEqual(isRawId(inbound.id), true, text);
      deepStrictEqual(JSON.stringify({ id: inbound.id }), `{"id":${token}}`, text);
    }
  }
  // A nested id at the end of the line is not the id of the request.
  const nested = readClientFrame(
    line('{"jsonrpc":"2.0","id":5,"method":"m","params":{"x":{"id":6}}}'),
    LIMITS,
    "b-",
  );
  deepStrictEqual(nested.kind === "request" && nested.id, 5);
  const cancel = readClientFrame(
    line(
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}',
    ),
    { ...LIMITS, max_line_bytes: 1000 },
    "b-",
  );
  const requestId = cancel.kind === "notification"
    ? (cancel.params as Record<string, unknown>).requestId
    : undefined;
  deepStrictEqual(JSON.stringify(requestId), "9007199254740993");
  // A fraction whose double is an integer is not an id.
  deepStrictEqual(
    summary(line('{"jsonrpc":"2.0","id":9007199254740993.5,"method":"ping"}')),
    ["reject", null, "invalid_request_shape"],
  );
});
