import { deepStrictEqual, ok } from "node:assert/strict";
import { MessageWriter } from "../../lib/jsonrpc/writer.ts";

Deno.test("writer writes one whole message per line in the order of the calls, with back pressure", async () => {
  const lines: string[] = [];
  const dec = new TextDecoder();
  const sink = new WritableStream<Uint8Array>({
    async write(chunk) {
      await new Promise((r) => setTimeout(r, Math.random() * 2));
      lines.push(dec.decode(chunk));
    },
  }, { highWaterMark: 1 });
  const writer = new MessageWriter(sink);
  const writes = [];
  for (let i = 0; i < 50; i++) {
    writes.push(writer.write({ jsonrpc: "2.0", method: "m", params: { i } }));
  }
  await Promise.all(writes);
  await writer.close();
  // Each chunk holds whole lines only.
  deepStrictEqual(lines.filter((chunk) => !chunk.endsWith("}\n")), []);
  const messages = lines.join("").split("\n").filter(Boolean);
  deepStrictEqual(messages.map((l) => JSON.parse(l).params.i), [...Array(50).keys()]);
});

Deno.test("a large result goes out in slices with the same bytes as one JSON text", async () => {
  const { markLarge } = await import("../../lib/jsonrpc/large.ts");
  const chunks: Uint8Array[] = [];
  const writer = new MessageWriter(new WritableStream({ write: (c) => void chunks.push(c) }));
  const result = {
    content: [{ type: "text", text: 'a😀"\\\n'.repeat(200_000) }],
    structuredContent: { big: "é".repeat(700_000) },
  };
  markLarge(result);
  const message = { jsonrpc: "2.0" as const, id: 1, result };
  await writer.write(message);
  await writer.write({ jsonrpc: "2.0", method: "after" });
  await writer.close();
  const text = chunks.map((c) => new TextDecoder().decode(c)).join("");
  deepStrictEqual(text, JSON.stringify(message) + "\n" + '{"jsonrpc":"2.0","method":"after"}\n');
  ok(chunks.length > 10, `${chunks.length} chunks`);
});
