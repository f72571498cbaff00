/** The buffers of the framer: the current line, and the tail of a line that is too long. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { isBlank, LineBuffer, TailRing } from "../../lib/jsonrpc/line_buffer.ts";

const bytes = (n: number, byte: number) => new Uint8Array(n).fill(byte);

Deno.test("LineBuffer: small and large lines come out whole, and the buffer is empty after", () => {
  const line = new LineBuffer();
  line.append(bytes(10, 1), 2, 10);
  line.append(bytes(5, 2), 0, 5);
  strictEqual(line.length, 13);
  strictEqual(line.lastByte(), 2);
  deepStrictEqual([...line.take(13)], [...bytes(8, 1), ...bytes(5, 2)]);
  strictEqual(line.length, 0);
  strictEqual(line.lastByte(), undefined);
  // Past 64 KiB the line is a list of parts, joined once into a buffer of its size.
  line.append(bytes(40_000, 3), 0, 40_000);
  line.append(bytes(40_000, 4), 0, 40_000);
  line.append(bytes(100, 5), 0, 99);
  const big = line.take(80_098);
  strictEqual(big.buffer.byteLength, 80_098);
  deepStrictEqual([big[0], big[39_999], big[40_000], big[79_999], big[80_000], big[80_097]], [
    3,
    3,
    4,
    4,
    5,
    5,
  ]);
});

Deno.test("LineBuffer: the owned whole chunks of a large line give their memory back at the reset, no other", () => {
  const line = new LineBuffer();
  const first = bytes(70_000, 1); // not owned: a chunk of the caller
  const owned = bytes(70_000, 2);
  line.append(first, 0, first.length);
  line.append(owned, 0, owned.length, true);
  line.take(140_000);
  strictEqual(owned.buffer.byteLength, 0, "the owned chunk was given back");
  strictEqual(first.buffer.byteLength, 70_000, "the caller's chunk is left alone");
});

Deno.test("TailRing keeps the last bytes across pushes", () => {
  const ring = new TailRing(4);
  ring.push(new Uint8Array([1, 2]));
  ring.push(new Uint8Array([3]));
  deepStrictEqual([...ring.take()], [1, 2, 3]);
  ring.push(new Uint8Array([1, 2, 3]));
  ring.push(new Uint8Array([4, 5]));
  deepStrictEqual([...ring.take()], [2, 3, 4, 5]);
  ring.push(new Uint8Array([9, 8, 7, 6, 5, 4]));
  deepStrictEqual([...ring.take()], [7, 6, 5, 4]);
});

Deno.test("isBlank: spaces, tabs and CR only", () => {
  const enc = new TextEncoder();
  strictEqual(isBlank(enc.encode(" \t\r "), 0, 4), true);
  strictEqual(isBlank(enc.encode(" x "), 0, 3), false);
  strictEqual(isBlank(enc.encode("x  "), 1, 3), true);
});
