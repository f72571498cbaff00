/**
 * The body of a POST to `serve`, read as the stdio face reads a line: at
 * most `--max-line-bytes` bytes are kept. A longer body becomes a too-long
 * frame with its first and last bytes, so that the same id scan finds the
 * id of its error (line_too_long); the depth limit and the parse errors then
 * apply to the body as to a line (`frontend/inbound.ts`). A body that does
 * not arrive within its time limit is refused, so a client that sends
 * nothing cannot hold a request for ever.
 *
 * @module
 */

import { EDGE_BYTES, type Frame } from "../jsonrpc/framer.ts";

/** How long the body of a request may take to arrive. */
export const BODY_TIMEOUT_MS = 60_000;

/** The body as a frame of the front end, or why it could not be read. */
export type BodyRead =
  | Frame
  | { readonly kind: "timeout" }
  | { readonly kind: "failed" }
  /** The bodies being read at once hold the whole budget: try again later. */
  | { readonly kind: "busy" };

/**
 * The bytes that all the bodies being read at once may hold: each body is
 * bounded by its limit, and this bounds how many such bodies the process
 * keeps in memory together (many clients that each send a large body).
 *
 * @example
 * ```ts
 * import { BodyBudget } from "./body.ts";
 * const budget = new BodyBudget(100);
 * if (!budget.take(60) || budget.take(60)) throw new Error("60 + 60 is over 100");
 * budget.give(60);
 * if (!budget.take(60)) throw new Error();
 * ```
 */
export class BodyBudget {
  #left: number;

  constructor(bytes: number) {
    this.#left = bytes;
  }

  /** Takes `bytes` of the budget; false (and nothing taken) when they are not left. */
  take(bytes: number): boolean {
    if (bytes > this.#left) return false;
    this.#left -= bytes;
    return true;
  }

  /** Gives `bytes` back. */
  give(bytes: number): void {
    this.#left += bytes;
  }
}

/**
 * Reads the body of `request` with the limit `maxBytes`, within the time
 * limit and the bytes of `budget` (given back when the read is over).
 *
 * @example
 * ```ts
 * import { readBody } from "./body.ts";
 * const post = (body: string) => new Request("http://127.0.0.1/mcp", { method: "POST", body });
 * const small = await readBody(post('{"jsonrpc":"2.0","id":1,"method":"ping"}'), 64, 1_000);
 * if (small.kind !== "line") throw new Error();
 * const big = await readBody(post(`{"id":7,"x":"${"a".repeat(100)}"}`), 64, 1_000);
 * if (big.kind !== "too_long" || big.length <= 64) throw new Error();
 * ```
 */
export async function readBody(
  request: Request,
  maxBytes: number,
  timeoutMs: number = BODY_TIMEOUT_MS,
  budget: BodyBudget = new BodyBudget(Infinity),
): Promise<BodyRead> {
  const body = request.body;
  if (!body) return { kind: "line", bytes: new Uint8Array() };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let head: Uint8Array | undefined;
  let tail = new Uint8Array();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  /** The bytes of the budget that this body holds. */
  let held = 0;
  try {
    for (;;) {
      const read = await Promise.race([reader.read(), late]);
      if (read === "timeout") {
        reader.cancel().catch(() => {});
        return { kind: "timeout" };
      }
      if (read.done) break;
      const chunk = read.value;
      // Only what is kept counts: a body over its limit keeps its edges only.
      const kept = head === undefined ? chunk.length : 0;
      if (!budget.take(kept)) {
        reader.cancel().catch(() => {});
        return { kind: "busy" };
      }
      held += kept;
      length += chunk.length;
      if (head === undefined && length <= maxBytes) {
        keep(chunks, chunk);
        continue;
      }
      if (head === undefined) {
        // Over the limit: keep the edges only, never the whole body.
        const all = join(chunks, length - chunk.length, chunk);
        head = all.slice(0, EDGE_BYTES);
        tail = all.slice(-EDGE_BYTES);
        chunks.length = 0;
        continue;
      }
      tail = join([tail], tail.length, chunk).slice(-EDGE_BYTES);
    }
  } catch {
    return { kind: "failed" };
  } finally {
    clearTimeout(timer);
    budget.give(held);
  }
  if (head !== undefined) return { kind: "too_long", head, tail, length };
  return { kind: "line", bytes: join(chunks, length) };
}

/** Reads under this size are gathered into blocks of this size. */
const SMALL_READ_BYTES = 4096;
const BLOCK_BYTES = 16_384;

/**
 * Appends the bytes of one read to `chunks`, so that the memory they hold
 * stays near their length. A read is a view of a larger buffer of Deno's (64
 * KiB): kept as it is, a client that sends a byte at a time would hold 64 KiB
 * per byte, past the budget, which counts bytes. A small read is copied into
 * the last block (a block holds its free room at the end), a larger one
 * that shares a buffer twice its size is copied.
 */
export function keep(chunks: Uint8Array[], chunk: Uint8Array): void {
  if (chunk.length >= SMALL_READ_BYTES) {
    chunks.push(chunk.byteLength * 2 < chunk.buffer.byteLength ? chunk.slice() : chunk);
    return;
  }
  const last = chunks.at(-1);
  if (last && OWN_BLOCKS.has(last.buffer) && BLOCK_BYTES - last.length >= chunk.length) {
    const grown = new Uint8Array(last.buffer, 0, last.length + chunk.length);
    grown.set(chunk, last.length);
    chunks[chunks.length - 1] = grown;
    return;
  }
  const buffer = new ArrayBuffer(BLOCK_BYTES);
  OWN_BLOCKS.add(buffer);
  const block = new Uint8Array(buffer, 0, chunk.length);
  block.set(chunk);
  chunks.push(block);
}

/** The blocks of {@linkcode keep}: only those grow (a read's buffer is Deno's). */
const OWN_BLOCKS = new WeakSet<ArrayBufferLike>();

/** The bytes of `chunks` (of `length` bytes in all), and `more` after them. */
function join(chunks: readonly Uint8Array[], length: number, more?: Uint8Array): Uint8Array {
  if (chunks.length === 1 && !more) return chunks[0]!;
  const out = new Uint8Array(length + (more?.length ?? 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  if (more) out.set(more, at);
  return out;
}
