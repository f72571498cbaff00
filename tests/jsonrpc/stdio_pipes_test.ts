/**
 * The sockets of ./stdio_pipes.ts over a real loopback connection: the reader
 * stops the reads while nobody waits (back pressure), gives every byte in
 * order, and the writer resolves only once its bytes are written.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import net from "node:net";
import type { ChunkSource } from "../../lib/jsonrpc/byte_io.ts";
import { type OnRead, socketChunks, socketWriter } from "../../lib/jsonrpc/stdio_pipes.ts";
import { waitFor } from "../wait.ts";

/**
 * A connected pair of loopback sockets; both ends are closed at the end.
 * `connect` makes the near end for the port.
 */
async function socketPair(
  connect = (port: number) => net.connect(port, "127.0.0.1"),
): Promise<{ near: net.Socket; far: net.Socket } & AsyncDisposable> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const accepted = new Promise<net.Socket>((resolve) => server.once("connection", resolve));
  const near = connect(port);
  await new Promise<void>((resolve) => near.once("connect", resolve));
  const far = await accepted;
  server.close();
  return {
    near,
    far,
    async [Symbol.asyncDispose]() {
      near.destroy();
      far.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A pair whose near end is read by socketChunks, as the bridge reads its stdin. */
async function readPair() {
  let source: ChunkSource | undefined;
  const pair = await socketPair((port) => {
    let near: net.Socket | undefined;
    source = socketChunks((onread: OnRead) =>
      near = net.connect({ port, host: "127.0.0.1", onread })
    );
    return near!;
  });
  return Object.assign(pair, { source: source! });
}

const pattern = (n: number) => {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = (i * 7 + 3) & 0xff;
  return bytes;
};

Deno.test("socketChunks: a reader that waits holds the writer; every byte comes, in order", async () => {
  await using pair = await readPair();
  const total = 256 * 1024 * 1024;
  const block = pattern(1024 * 1024);
  let written = 0;
  const writing = (async () => {
    while (written < total) {
      const more = pair.far.write(block);
      written += block.length;
      if (!more) await new Promise((resolve) => pair.far.once("drain", resolve));
    }
    pair.far.end();
  })();
  const source = pair.source;
  const first = await source.next();
  ok(first && first.length > 0, "the first chunk");
  // Nobody asks for the next chunk: the reads stop, the kernel's buffers
  // fill up, and the writer stops far before the end.
  let seen = -1;
  let since = Date.now();
  await waitFor("a stall of the writer", () => {
    if (seen !== written) [seen, since] = [written, Date.now()];
    return Date.now() - since > 300;
  }, { timeoutMs: 10_000 });
  ok(written < total / 4, `the writer got ${written} bytes into a reader that did not read`);
  // Then every byte, in order.
  let at = 0;
  const check = (chunk: Uint8Array) => {
    ok(!(chunk instanceof globalThis.Buffer), "a plain Uint8Array, whose slice() copies");
    for (let i = 0; i < chunk.length; i += 4099) {
      if (chunk[i] !== block[(at + i) % block.length]) throw new Error(`byte ${at + i} differs`);
    }
    at += chunk.length;
  };
  check(first);
  for (let chunk = await source.next(); chunk; chunk = await source.next()) check(chunk);
  strictEqual(at, total);
  await writing;
  strictEqual(await source.next(), null, "the end stays the end");
});

Deno.test("socketChunks: cancel ends a pending read with null", async () => {
  await using pair = await readPair();
  const source = pair.source;
  const pending = source.next();
  source.cancel();
  strictEqual(await pending, null);
  strictEqual(await source.next(), null);
});

Deno.test("socketWriter: a write resolves once written; after the reader is gone, writes reject", async () => {
  await using pair = await socketPair();
  const writer = socketWriter(pair.near);
  const received: Uint8Array[] = [];
  pair.far.on("data", (chunk: Uint8Array) => received.push(chunk));
  const bytes = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"result":{}}\n');
  strictEqual(await writer.write(bytes), bytes.length);
  await waitFor(
    "the bytes at the peer",
    () => received.reduce((n, c) => n + c.length, 0) === bytes.length,
  );
  pair.far.destroy();
  // The peer is gone: a write fails (EPIPE or a reset), it does not hang or throw at the caller.
  await rejects(async () => {
    for (let i = 0; i < 1000; i++) await writer.write(pattern(64 * 1024));
  });
});

Deno.test("socketWriter: a large write goes to the socket in pieces of at most 1 MiB, in order", async () => {
  const pieces: Uint8Array[] = [];
  const callbacks: (() => void)[] = [];
  // The socket's side of a write: the bytes, and a callback once they are written.
  const socket = {
    on: () => socket,
    write: (piece: Uint8Array, done: () => void) => {
      pieces.push(piece);
      callbacks.push(done);
      return true;
    },
  } as unknown as net.Socket;
  const writer = socketWriter(socket);
  const bytes = pattern(5 * 1024 * 1024 + 7);
  let resolved = false;
  const writing = writer.write(bytes).then((n) => {
    resolved = true;
    return n;
  });
  // One piece at a time: the next piece only after the socket wrote the last.
  for (let i = 0; i < 6; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    strictEqual(pieces.length, i + 1, "one piece in the socket at a time");
    ok(!resolved, "resolved before the socket wrote every piece");
    callbacks[i]!();
  }
  strictEqual(await writing, bytes.length);
  ok(pieces.every((piece) => piece.length <= 1024 * 1024), "a piece over 1 MiB");
  const joined = new Uint8Array(bytes.length);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  strictEqual(at, bytes.length);
  ok(joined.every((b, i) => b === bytes[i]), "the pieces are the bytes, in order");
});

Deno.test("socketChunks: each chunk is a copy out of the read buffer; a read that finds nobody waiting stops the reads", async () => {
  const { EventEmitter } = await import("node:events");
  let resumed = 0;
  const socket = Object.assign(new EventEmitter(), {
    resume: () => resumed++,
    pause() {},
    destroy() {},
  });
  let onread: OnRead | undefined;
  const source = socketChunks((given) => {
    onread = given;
    return socket as unknown as net.Socket;
  })!;
  const read = (bytes: number[]) => {
    onread!.buffer.set(bytes);
    return onread!.callback(bytes.length, onread!.buffer);
  };
  // Nobody waits: the chunk is kept, and the socket is told to stop.
  strictEqual(read([1, 2, 3]), false);
  const first = (await source.next())!;
  deepStrictEqual([...first], [1, 2, 3]);
  ok(first.buffer !== onread!.buffer.buffer, "a buffer of its own, not the read buffer");
  strictEqual(first.buffer.byteLength, 3);
  // A reader waits: the reads start again, and a read that finds it waiting goes on reading.
  const waiting = source.next();
  strictEqual(resumed, 1);
  strictEqual(read([4, 5]), true);
  deepStrictEqual([...(await waiting)!], [4, 5]);
  deepStrictEqual([...first], [1, 2, 3], "a later read does not change an earlier chunk");
  const again = source.next();
  strictEqual(resumed, 1, "reads that never stopped are not started again");
  socket.emit("end");
  strictEqual(await again, null);
});
