/** The body of a POST to `serve` (lib/serve/body.ts): what a read keeps in memory. */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { keep, readBody } from "../../lib/serve/body.ts";

/** `n` reads of `size` bytes, each a view of a 64 KiB buffer of its own (as Deno's reads are). */
function views(n: number, size: number): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => {
    const buffer = new Uint8Array(65_536);
    buffer.fill(i % 251, 0, size);
    return buffer.subarray(0, size);
  });
}

/** The bytes of all the buffers that `chunks` hold. */
function held(chunks: readonly Uint8Array[]): number {
  return [...new Set(chunks.map((c) => c.buffer))].reduce((sum, b) => sum + b.byteLength, 0);
}

Deno.test("serve body: a client that sends a byte a read holds about its bytes, not 64 KiB a byte", () => {
  const chunks: Uint8Array[] = [];
  for (const view of views(5_000, 1)) keep(chunks, view);
  const length = chunks.reduce((sum, c) => sum + c.length, 0);
  strictEqual(length, 5_000);
  ok(held(chunks) <= 2 * length + 16_384, `${held(chunks)} bytes held for ${length}`);
  // The bytes, in order.
  const bytes = chunks.flatMap((c) => [...c]);
  deepStrictEqual(bytes.slice(0, 3), [0, 1, 2]);
  strictEqual(bytes[4_999], 4_999 % 251);
});

Deno.test("serve body: reads of a few KiB in large buffers are copied; a read that fills its buffer is kept as it is", () => {
  const chunks: Uint8Array[] = [];
  for (const view of views(100, 5_000)) keep(chunks, view);
  ok(held(chunks) <= 2 * 500_000, `${held(chunks)} bytes held for 500000`);
  const whole = new Uint8Array(65_536);
  keep(chunks, whole);
  strictEqual(chunks.at(-1), whole);
});

Deno.test("serve body: a body in reads of every size arrives whole and in order", async () => {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "ping",
    params: { x: "y".repeat(70_000) },
  });
  const bytes = new TextEncoder().encode(text);
  const sizes = [1, 3, 4_095, 4_096, 10, 20_000, 1, 65_536];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let at = 0;
      for (let i = 0; at < bytes.length; i++) {
        const size = sizes[i % sizes.length]!;
        const buffer = new Uint8Array(65_536);
        const part = bytes.subarray(at, at + size);
        buffer.set(part);
        controller.enqueue(buffer.subarray(0, part.length));
        at += part.length;
      }
      controller.close();
    },
  });
  const read = await readBody(
    new Request("http://127.0.0.1/mcp", { method: "POST", body }),
    1 << 20,
    1_000,
  );
  strictEqual(read.kind, "line");
  strictEqual(new TextDecoder().decode((read as { bytes: Uint8Array }).bytes), text);
});
