/**
 * The bridge's own stdin and stdout, read and written on the event loop when
 * they are pipes or sockets (as VS Code and every MCP client give them).
 *
 * `Deno.stdin.read` and `Deno.stdout.write` run each call on a thread of the
 * blocking pool: a read duplicates fd 0, wakes a thread, waits for it to
 * signal back and closes the duplicate; a write wakes a thread too. That is
 * two thread hand-offs per small tools/call on the path of its latency, and
 * about a quarter of the bridge's CPU time per call in the benchmark
 * (`deno task bench`). A `node:net` Socket on the descriptor makes it
 * non-blocking and polls it with the other pipes: a read or a write is one
 * system call on the main thread.
 *
 * A file, a terminal, or a descriptor shared with another of the three keeps
 * Deno's own reader and writer ({@linkcode openStdio}), which work on anything.
 *
 * @module
 */

import { fstatSync, type Stats } from "node:fs";
import net from "node:net";
import type { ByteInput, ByteWriter, ChunkSource } from "./byte_io.ts";

/** The shape of a `node:net` Socket that this module uses. */
type Socket = net.Socket;

/** The bridge's input and output. */
export interface Stdio {
  readonly input: ByteInput;
  readonly output: ByteWriter;
}

/**
 * Stdin and stdout as sockets when both are pipes or sockets of their own;
 * else `Deno.stdin` and `Deno.stdout`.
 *
 * The socket makes its descriptor non-blocking, and the flag belongs to the
 * open file, which `2>&1` shares with stderr: the log's blocking writes
 * (`Deno.stderr.writeSync`) would then fail on a full pipe, and a non-blocking
 * stdin would do the same to a blocking stdout that is the same socket. So
 * each of the three must be a file of its own; then each of stdin and stdout
 * is a socket, or Deno's, on its own.
 */
export function openStdio(): Stdio {
  const fallback: Stdio = { input: Deno.stdin, output: Deno.stdout };
  if (Deno.stdin.isTerminal() || Deno.stdout.isTerminal()) return fallback;
  let files: Stats[];
  try {
    files = [fstatSync(0), fstatSync(1), fstatSync(2)];
  } catch {
    return fallback; // a closed descriptor
  }
  const [stdin, stdout] = files as [Stats, Stats, Stats];
  const pipe = (file: Stats) => file.isFIFO() || file.isSocket();
  const ids = new Set(files.map((file) => `${file.dev}:${file.ino}`));
  if (!pipe(stdin) || !pipe(stdout) || ids.size !== 3) return fallback;
  const input = socketOf(0);
  const output = socketOf(1);
  return {
    input: input ? { chunks: () => socketChunks(input) } : Deno.stdin,
    output: output ? socketWriter(output) : Deno.stdout,
  };
}

/**
 * A descriptor as a socket, or undefined where the platform's sockets do not
 * take it; a descriptor that the constructor refused is left as it was.
 */
function socketOf(fd: 0 | 1): Socket | undefined {
  try {
    return new net.Socket({ fd, readable: fd === 0, writable: fd === 1 });
  } catch {
    return undefined;
  }
}

/**
 * The chunks of a readable socket, one at a time: the socket is paused while
 * nobody waits for a chunk, so a reader that holds (back pressure) stops the
 * reads of the descriptor, and the pipe fills up at the client.
 */
export function socketChunks(socket: Socket): ChunkSource {
  const queue: Uint8Array[] = [];
  let ended = false;
  let waiter: ((chunk: Uint8Array | null) => void) | undefined;
  const give = (chunk: Uint8Array | null) => {
    const wake = waiter;
    waiter = undefined;
    wake?.(chunk);
  };
  socket.pause();
  socket.on("data", (data: Uint8Array) => {
    socket.pause();
    // A plain Uint8Array (a Buffer's slice() is a view, where the framer
    // expects a copy) over a buffer of its own: the framer may give that
    // buffer's memory back (`owned`), which must hold nothing else.
    const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const chunk = whole && data.buffer instanceof ArrayBuffer
      ? new Uint8Array(data.buffer)
      : new Uint8Array(data); // a copy
    if (waiter) give(chunk);
    else queue.push(chunk);
  });
  const end = () => {
    ended = true;
    give(null);
  };
  socket.on("end", end);
  socket.on("close", end);
  // A read error ends the input, as the end of stdin does.
  socket.on("error", end);
  return {
    next: () => {
      const chunk = queue.shift();
      if (chunk) return Promise.resolve(chunk);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => {
        waiter = resolve;
        socket.resume();
      });
    },
    cancel: () => {
      end();
      socket.destroy();
    },
    release: () => socket.pause(),
    // Each chunk is a buffer of its own, made for this read.
    owned: true,
  };
}

/** The largest piece of one socket write. */
const WRITE_PIECE_BYTES = 1024 * 1024;

/**
 * A writer over a writable socket. A write resolves when the socket handed
 * its bytes to the descriptor, so the caller may reuse or free them; it
 * rejects once the reader of the other end is gone (EPIPE).
 */
export function socketWriter(socket: Socket): ByteWriter {
  let failed: Error | undefined;
  socket.on("error", (error: Error) => failed ??= error);
  const writePiece = (piece: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      socket.write(piece, (error) => error ? reject(error) : resolve());
    });
  return {
    write: async (bytes) => {
      // A write that the pipe cannot take at once is copied for the poller:
      // in pieces, a large line costs a piece of memory, not a second copy.
      for (let at = 0; at < bytes.length; at += WRITE_PIECE_BYTES) {
        if (failed) throw failed;
        await writePiece(bytes.subarray(at, at + WRITE_PIECE_BYTES));
      }
      return bytes.length;
    },
    close: () => void socket.end(),
  };
}
