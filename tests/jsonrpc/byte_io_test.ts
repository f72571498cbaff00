/** The plain and BYOB reads: a chunk stays as it was read, whatever the later reads do. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type ByteReader, openSink, READ_BYTES, readChunks } from "../../lib/jsonrpc/byte_io.ts";

/** A reader that gives each of `chunks` in its own read, then the end. */
function plainReader(chunks: Uint8Array[]): ByteReader {
  let i = 0;
  return {
    read(buffer) {
      const chunk = chunks[i++];
      if (!chunk) return Promise.resolve(null);
      buffer.set(chunk);
      return Promise.resolve(chunk.length);
    },
  };
}

/** A byte stream (as the pipes of a child are) that gives each of `chunks` in its own read. */
function byteStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const chunk = chunks[i++];
      const request = controller.byobRequest;
      if (!chunk) {
        controller.close();
        request?.respond(0);
        return;
      }
      if (!request?.view) throw new Error("expected a BYOB read");
      new Uint8Array(request.view.buffer, request.view.byteOffset).set(chunk);
      request.respond(chunk.length);
    },
  });
}

const fill = (n: number, byte: number) => new Uint8Array(n).fill(byte);

async function readAll(input: ByteReader | ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const source = readChunks(input);
  const out: Uint8Array[] = [];
  for (let chunk = await source.next(); chunk; chunk = await source.next()) out.push(chunk);
  source.release();
  return out;
}

for (
  const [name, make] of [["a plain reader", plainReader], ["a byte stream", byteStream]] as const
) {
  Deno.test(`${name}: small chunks are copies, a large one keeps its buffer; none changes later`, async () => {
    const chunks = [fill(10, 1), fill(20_000, 2), fill(5, 3), fill(READ_BYTES, 4), fill(7, 5)];
    const got = await readAll(make(chunks));
    deepStrictEqual(got.map((c) => c.length), [10, 20_000, 5, READ_BYTES, 7]);
    // Each chunk still holds its own bytes after all the later reads.
    for (const [i, chunk] of got.entries()) {
      strictEqual(chunk.every((b) => b === i + 1), true, `chunk ${i} was overwritten`);
    }
    // A small chunk is a copy of its exact size, not a view of the 64 KiB read buffer.
    strictEqual(got[0]!.buffer.byteLength, 10);
  });
}

Deno.test("a stream that is not a byte stream is read with its own chunks", async () => {
  const chunks = [fill(3, 1), fill(4, 2)];
  const got = await readAll(ReadableStream.from(chunks));
  deepStrictEqual(got, chunks);
});

Deno.test("cancel ends a pending read of a plain reader with the end", async () => {
  const source = readChunks({ read: () => new Promise<number | null>(() => {}) });
  const pending = source.next();
  source.cancel();
  strictEqual(await pending, null);
  strictEqual(await source.next(), null);
});

Deno.test("the pipe of a real child: every byte in order, through the BYOB reads", async () => {
  const child = new Deno.Command("seq", { args: ["1", "400000"], stdout: "piped" }).spawn();
  const got = await readAll(child.stdout);
  await child.status;
  const decoder = new TextDecoder();
  const text = got.map((chunk) => decoder.decode(chunk, { stream: true })).join("");
  const expected = Array.from({ length: 400_000 }, (_, i) => `${i + 1}\n`).join("");
  strictEqual(text.length, expected.length);
  strictEqual(text === expected, true, "the bytes came out of order or changed");
});

Deno.test("a sink over a plain writer writes what a short write left, then closes it", async () => {
  const written: number[] = [];
  let closed = false;
  const sink = openSink({
    write: (bytes) => {
      written.push(bytes[0]!);
      return Promise.resolve(1);
    },
    close: () => void (closed = true),
  });
  await sink.write(new Uint8Array([7, 8, 9]));
  await sink.close();
  deepStrictEqual([written, closed], [[7, 8, 9], true]);
});
