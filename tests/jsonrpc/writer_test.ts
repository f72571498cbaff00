import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { MessageWriter, UnwrittenMessage } from "../../lib/jsonrpc/writer.ts";

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

/** An object chain that V8 serializes on its recursive path (a member was deleted). */
function deepDictionary(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = { gone: 1 };
  delete root.gone;
  let node = root;
  for (let i = 0; i < depth; i++) {
    const next: Record<string, unknown> = { gone: 1 };
    delete next.gone;
    node.a = next;
    node = next;
  }
  return root;
}

function collect(): { sink: WritableStream<Uint8Array>; text: () => string } {
  const chunks: Uint8Array[] = [];
  const sink = new WritableStream<Uint8Array>({ write: (c) => void chunks.push(c) });
  return { sink, text: () => chunks.map((c) => new TextDecoder().decode(c)).join("") };
}

Deno.test("a message that JSON.stringify cannot write is replaced, and the writer goes on", async () => {
  const { markLarge } = await import("../../lib/jsonrpc/large.ts");
  const out = collect();
  const seen: string[] = [];
  const writer = new MessageWriter(out.sink, {
    replaceUnwritable: (message, error) => {
      seen.push(error.name);
      return "id" in message
        ? { jsonrpc: "2.0", id: message.id!, error: { code: -32603, message: "unwritable" } }
        : undefined;
    },
  });
  const deep = deepDictionary(100_000) as never;
  await writer.write({ jsonrpc: "2.0", id: 1, result: deep });
  const large = { big: "x".repeat(300_000), deep };
  markLarge(large);
  await writer.write({ jsonrpc: "2.0", id: 2, result: large });
  // Not replaced: its write rejects, and the writer goes on.
  const dropped = await writer.write({ jsonrpc: "2.0", method: "deep", params: deep }).catch((e) =>
    e
  );
  strictEqual(dropped instanceof UnwrittenMessage && dropped.reason, "unserializable");
  await writer.write({ jsonrpc: "2.0", id: 3, result: {} });
  await writer.close();
  deepStrictEqual(out.text().split("\n"), [
    '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"unwritable"}}',
    '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"unwritable"}}',
    '{"jsonrpc":"2.0","id":3,"result":{}}',
    "",
  ]);
  deepStrictEqual(seen, ["RangeError", "RangeError", "RangeError"]);
});

Deno.test("encodeBatch gives the bytes of each text and its newline, for ASCII and for other text", async () => {
  const { encodeBatch } = await import("../../lib/jsonrpc/writer.ts");
  const enc = new TextEncoder();
  const texts = ['{"a":1}', '{"é":"😀"}', "x".repeat(1000), '{"k":"€€€"}', "{}", "ü"];
  for (let start = 0; start < texts.length; start++) {
    const batch = texts.slice(start).map((body) => ({ body }));
    const expected = enc.encode(texts.slice(start).map((t) => t + "\n").join(""));
    deepStrictEqual(encodeBatch(batch), expected);
  }
  deepStrictEqual(encodeBatch([{ body: "ab" }]), enc.encode("ab\n"));
});

Deno.test("send and write keep one order; a batch is one chunk of whole lines", async () => {
  const chunks: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const sink = new WritableStream<Uint8Array>({
    async write(chunk) {
      await gate;
      chunks.push(new TextDecoder().decode(chunk));
    },
  });
  const writer = new MessageWriter(sink);
  const done: number[] = [];
  for (let i = 0; i < 20; i++) {
    if (i % 3 === 0) {
      writer.write({ jsonrpc: "2.0", method: "w", params: { i } }).then(() => done.push(i));
    } else writer.send({ jsonrpc: "2.0", method: "s", params: { i, t: "é" } });
  }
  release();
  await writer.close();
  // The flush starts after the task that wrote them: the 20 lines went in one chunk.
  deepStrictEqual(chunks.length, 1);
  const lines = chunks.join("").split("\n").filter(Boolean);
  deepStrictEqual(lines.map((l) => JSON.parse(l).params.i), [...Array(20).keys()]);
  deepStrictEqual(done, [0, 3, 6, 9, 12, 15, 18]);
});

Deno.test("the messages of one task go out in one write; a later task gets its own", async () => {
  const chunks: string[] = [];
  const writer = new MessageWriter(
    new WritableStream<Uint8Array>({
      write: (chunk) => void chunks.push(new TextDecoder().decode(chunk)),
    }),
  );
  for (let i = 0; i < 5; i++) writer.send({ jsonrpc: "2.0", method: "a", params: { i } });
  await new Promise((resolve) => setTimeout(resolve, 0));
  writer.send({ jsonrpc: "2.0", method: "b" });
  await writer.close();
  deepStrictEqual(chunks.length, 2);
  deepStrictEqual(chunks[0]!.split("\n").filter(Boolean).length, 5);
  deepStrictEqual(JSON.parse(chunks[1]!).method, "b");
});

Deno.test("reused batch buffer: a chunk stays as written until its write resolves, and then serves the next batch", async () => {
  const dec = new TextDecoder();
  const held: { chunk: Uint8Array; text: string; done: (n: number) => void }[] = [];
  // A ByteWriter that takes its time: each write resolves only when the test says.
  const writer = new MessageWriter({
    write: (chunk) => new Promise((done) => held.push({ chunk, text: dec.decode(chunk), done })),
  });
  const texts: string[] = [];
  for (let i = 0; i < 6; i++) {
    writer.send({ jsonrpc: "2.0", method: "m", params: { i, text: "é".repeat(i * 3000) } });
    // Let the flush start; the next message waits for the write in flight.
    await new Promise((resolve) => setTimeout(resolve, 0));
    strictEqual(held.length, 1, "one write in flight at a time");
    const [write] = held;
    // Nothing changed the bytes while the sink held them.
    strictEqual(dec.decode(write!.chunk), write!.text);
    texts.push(write!.text);
    held.length = 0;
    write!.done(write!.chunk.length);
  }
  await writer.close();
  deepStrictEqual(texts.map((t) => JSON.parse(t).params.i), [0, 1, 2, 3, 4, 5]);
});

Deno.test("a WritableStream's chunks are never reused: a reader that reads them late sees each whole", async () => {
  const stream = new TransformStream<Uint8Array, Uint8Array>();
  const writer = new MessageWriter(stream.writable);
  const writes = [];
  for (let i = 0; i < 20; i++) {
    writes.push(writer.write({ jsonrpc: "2.0", method: "m", params: { i } }));
  }
  // The reader reads only after the writes resolved.
  const reading = (async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream.readable) chunks.push(chunk);
    return chunks;
  })();
  await Promise.all(writes);
  await writer.close();
  await stream.writable.close().catch(() => {});
  const text = (await reading).map((c) => new TextDecoder().decode(c)).join("");
  deepStrictEqual(text.trimEnd().split("\n").map((l) => JSON.parse(l).params.i), [
    ...Array(20).keys(),
  ]);
});

Deno.test("a sink that fails: the messages of that write and every later one reject with its error, the hold ends", async () => {
  const gone = new Deno.errors.BrokenPipe("the reader is gone");
  let writes = 0;
  const writer = new MessageWriter({
    write: (bytes) => ++writes === 1 ? Promise.resolve(bytes.length) : Promise.reject(gone),
  }, { highWaterBytes: 64 });
  await writer.write({ jsonrpc: "2.0", method: "first" });
  const pad = "x".repeat(100);
  // One batch, above the high water: the readers are held until the sink fails.
  const batch = [1, 2, 3].map((n) =>
    writer.write({ jsonrpc: "2.0", method: "m", params: { n, pad } }).catch((e) => e)
  );
  const hold = writer.hold();
  ok(hold);
  const failed = await Promise.all(batch);
  await hold;
  for (const error of failed) {
    ok(error instanceof UnwrittenMessage && error.reason === "broken", String(error));
    strictEqual(error.cause, gone);
  }
  // A later write fails at once, without a write to the sink.
  const later = await writer.write({ jsonrpc: "2.0", method: "later" }).catch((e) => e);
  strictEqual(later, failed[0]);
  strictEqual(writes, 2);
  strictEqual(writer.hold(), undefined);
  await writer.close();
  const closed = await writer.write({ jsonrpc: "2.0", method: "closed" }).catch((e) => e);
  strictEqual(closed instanceof UnwrittenMessage && closed.reason, "closed");
});
