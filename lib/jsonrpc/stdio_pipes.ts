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
import { type ByteInput, type ByteWriter, type ChunkSource, READ_BYTES } from "./byte_io.ts";

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
  const input = socketChunks((onread) => socketOf(0, onread));
  const output = socketOf(1);
  return {
    input: input ? { chunks: () => input } : Deno.stdin,
    output: output ? socketWriter(output) : Deno.stdout,
  };
}

/** What `net.Socket` takes as its `onread` option: reads into a buffer of ours. */
export interface OnRead {
  readonly buffer: Uint8Array;
  readonly callback: (bytes: number, buffer: Uint8Array) => boolean;
}

/**
 * A socket over a descriptor, or undefined where the platform's sockets do
 * not take it; a descriptor that the constructor refused is left as it was.
 */
function socketOf(fd: 0 | 1, onread?: OnRead): Socket | undefined {
  try {
    return new net.Socket({
      fd,
      readable: fd === 0,
      writable: fd === 1,
      ...(onread && { onread }),
    });
  } catch {
    return undefined;
  }
}

/**
 * The chunks of a readable socket, one at a time. `open` makes the socket
 * with the `onread` option that it is given: the socket reads into one
 * buffer of this reader, and each chunk is copied out of it (a buffer of its
 * own), without a buffer made per read, a `Readable` or a 'data' event.
 *
 * A read that finds nobody waiting for a chunk stops the reads of the
 * socket, so a reader that holds (back pressure) leaves the bytes in the
 * pipe, which fills up at the client. A reader that keeps up (a request at
 * a time) costs no stop and no start of the reads.
 */
export function socketChunks(
  open: (onread: OnRead) => Socket | undefined,
): ChunkSource | undefined {
  const queue: Uint8Array[] = [];
  let ended = false;
  let reading = true;
  let waiter: ((chunk: Uint8Array | null) => void) | undefined;
  const give = (chunk: Uint8Array | null) => {
    const wake = waiter;
    waiter = undefined;
    wake?.(chunk);
  };
  const buffer = new Uint8Array(READ_BYTES);
  const socket = open({
    buffer,
    callback: (bytes) => {
      // A copy: the next read fills the same buffer.
      const chunk = buffer.slice(0, bytes);
      if (waiter) {
        give(chunk);
        return true;
      }
      queue.push(chunk);
      reading = false;
      return false; // the socket stops reading
    },
  });
  if (!socket) return undefined;
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
        if (!reading) {
          reading = true;
          socket.resume();
        }
      });
    },
    cancel: () => {
      end();
      socket.destroy();
    },
    release: () => {
      reading = false;
      socket.pause();
    },
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
