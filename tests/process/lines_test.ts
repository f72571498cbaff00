/** The rules of "Lines that are not valid", over the real program. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, MODERN_SERVER } from "./helpers.ts";

function cause(msg: Record<string, unknown> | null): unknown {
  return (msg?.error as { data?: { cause?: string } } | undefined)?.data?.cause;
}

Deno.test("invalid JSON, invalid UTF-8, deep nesting and bad shapes get the table's errors with the scanned id", async () => {
  await using bridge = new BridgeProcess(["--max-line-bytes", "4096", "--", ...MODERN_SERVER]);
  await bridge.writeRaw('{"jsonrpc":"2.0","id":11,"method":"ping",,}\n');
  let msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg), (msg?.error as { code: number }).code], [
    11,
    "parse_error",
    -32700,
  ]);

  await bridge.writeRaw(
    new Uint8Array([...new TextEncoder().encode('{"id":"u8","x":"'), 0xff, 0x22, 0x7d, 0x0a]),
  );
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], ["u8", "parse_error"]);

  await bridge.writeRaw("garbage\n");
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], [null, "parse_error"]);

  const deep = "[".repeat(65) + "]".repeat(65);
  await bridge.writeRaw(`{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":${deep}}}\n`);
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg), (msg?.error as { data: unknown }).data], [12, "too_deep", {
    cause: "too_deep",
    detail: "limit: 64 levels",
  }]);

  await bridge.writeRaw('{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n');
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg), (msg?.error as { code: number }).code], [
    null,
    "invalid_request_shape",
    -32600,
  ]);

  await bridge.writeRaw('[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n');
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], [null, "invalid_request_shape"]);

  await bridge.writeRaw('{"jsonrpc":"2.0","id":13}\n');
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], [13, "invalid_request_shape"]);

  // No answer: responses with a null or bad id, an error response without id, a b- id, unknown ids.
  await bridge.writeRaw('{"jsonrpc":"2.0","id":null,"result":{}}\n');
  await bridge.writeRaw('{"jsonrpc":"2.0","id":{},"result":{}}\n');
  await bridge.writeRaw('{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}\n');
  await bridge.writeRaw('{"jsonrpc":"2.0","id":"b-9","result":{}}\n');
  await bridge.writeRaw('{"jsonrpc":"2.0","id":"b-10",,,\n');
  await bridge.writeRaw('{"jsonrpc":"2.0","id":77,"result":{}}\n');
  await bridge.request("last", "ping");
  msg = await bridge.next();
  deepStrictEqual(msg?.id, "last");
  strictEqual(await bridge.exit(), 0);
});

Deno.test("a too-long line gets line_too_long with the id from its head or its tail; b- ids get nothing", async () => {
  await using bridge = new BridgeProcess(["--max-line-bytes", "1000", "--", ...MODERN_SERVER]);
  const pad = "x".repeat(3000);
  await bridge.writeRaw(
    `{"jsonrpc":"2.0","id":"head","method":"tools/call","params":{"p":"${pad}"}}\n`,
  );
  let msg = await bridge.next();
  deepStrictEqual(msg, {
    jsonrpc: "2.0",
    id: "head",
    error: {
      code: -32600,
      message: "The request is longer than the line limit of the bridge.",
      data: { cause: "line_too_long", detail: "limit: 1000 bytes" },
    },
  });
  // The TypeScript SDK 1.x writes the id last.
  await bridge.writeRaw(
    `{"method":"tools/call","params":{"p":"${pad}"},"jsonrpc":"2.0","id":42}\r\n`,
  );
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], [42, "line_too_long"]);
  await bridge.writeRaw(`{"method":"x","params":{"p":"${pad}"}}\n`);
  msg = await bridge.next();
  deepStrictEqual([msg?.id, cause(msg)], [null, "line_too_long"]);
  await bridge.writeRaw(`{"jsonrpc":"2.0","result":{"p":"${pad}"},"id":"b-3"}\n`);
  await bridge.request("after", "ping");
  msg = await bridge.next();
  deepStrictEqual(msg?.id, "after");
});

Deno.test("robustness: random bytes, random JSON, deep nesting and long lines at random chunk boundaries", async () => {
  await using bridge = new BridgeProcess(["--max-line-bytes", "2048", "--", ...MODERN_SERVER]);
  let seed = 7;
  const r = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const enc = new TextEncoder();
  const lines: Uint8Array[] = [];
  const expected = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const kind = Math.floor(r() * 5);
    const id = `r${i}`;
    if (kind === 0) {
      // Random bytes without a newline: one line, an error with id null at most.
      lines.push(
        Uint8Array.from({ length: 1 + Math.floor(r() * 100) }, () => Math.floor(r() * 256)).map((
          b,
        ) => b === 10 ? 32 : b),
      );
    } else if (kind === 1) {
      lines.push(enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })));
      expected.add(id);
    } else if (kind === 2) {
      lines.push(
        enc.encode(`{"jsonrpc":"2.0","id":"${id}","method":"ping","params":${"[".repeat(100)}`),
      );
      expected.add(id);
    } else if (kind === 3) {
      lines.push(
        enc.encode(
          `{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"p":"${"y".repeat(5000)}"}}`,
        ),
      );
      expected.add(id);
    } else {
      lines.push(
        enc.encode(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: [r()] })),
      );
      expected.add(id);
    }
  }
  const all = new Uint8Array(lines.reduce((n, l) => n + l.length + 1, 0));
  let off = 0;
  for (const l of lines) {
    all.set(l, off);
    all[off + l.length] = 10;
    off += l.length + 1;
  }
  for (let start = 0; start < all.length;) {
    const end = Math.min(all.length, start + 1 + Math.floor(r() * 700));
    await bridge.writeRaw(all.slice(start, end));
    start = end;
  }
  await bridge.request("end", "ping");
  const seen = new Map<string, number>();
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error("the bridge stopped answering");
    const id = msg.id;
    if (typeof id === "string") seen.set(id, (seen.get(id) ?? 0) + 1);
    if (id === "end") break;
  }
  for (const id of expected) strictEqual(seen.get(id), 1, `exactly one response for ${id}`);
  strictEqual(await bridge.exit(), 0);
});
