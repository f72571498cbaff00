/**
 * Large messages: the bridge writes them in slices, so that it never holds
 * the serialized text of a 64 MiB result next to the result itself.
 *
 * @module
 */

import { isObject, isRawId, type Json, type Message } from "./message.ts";

/**
 * A line above this size marks its result as large.
 */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

/** The characters of one slice of a large string. */
const SLICE_CHARS = 256 * 1024;

const large = new WeakSet<object>();
const encoder = new TextEncoder();

/**
 * Marks a value that came from a large line.
 *
 * @example
 * ```ts
 * import { isLargeMessage, markLarge } from "./large.ts";
 * const result = { content: [{ type: "text", text: "…" }] };
 * markLarge(result);
 * if (!isLargeMessage({ jsonrpc: "2.0", id: 1, result })) throw new Error();
 * if (isLargeMessage({ jsonrpc: "2.0", id: 2, result: {} })) throw new Error();
 * ```
 */
export function markLarge(value: Json | undefined): void {
  if (isObject(value) || Array.isArray(value)) large.add(value);
}

/** True for a message whose result came from a large line. */
export function isLargeMessage(message: Message): boolean {
  const result = (message as { result?: Json }).result;
  return (isObject(result) || Array.isArray(result)) && large.has(result);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Characters that JSON.stringify escapes (a lone surrogate is checked apart). */
// deno-lint-ignore no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** A long string taken out of the message while its skeleton is serialized. */
interface Hole {
  readonly holder: Json[] | { [key: string]: Json };
  readonly key: string | number;
  readonly text: string;
}

/**
 * Replaces each string longer than {@linkcode SLICE_CHARS} with a marker, in
 * place, without recursion (a deep value cannot overflow the stack here).
 */
function takeLongStrings(root: Json, marker: string): Hole[] {
  const holes: Hole[] = [];
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const value = node[i]!;
        if (typeof value === "string") {
          if (value.length > SLICE_CHARS) {
            node[i] = marker + holes.length;
            holes.push({ holder: node, key: i, text: value });
          }
        } else if (typeof value === "object" && value !== null && !isRawId(value)) {
          stack.push(value); // a RawId (an exact id) is frozen and written as it is
        }
      }
    } else if (typeof node === "object" && node !== null) {
      for (const key in node) {
        const value = node[key]!;
        if (typeof value === "string") {
          if (value.length > SLICE_CHARS) {
            node[key] = marker + holes.length;
            holes.push({ holder: node, key, text: value });
          }
        } else if (typeof value === "object" && value !== null && !isRawId(value)) {
          stack.push(value); // a RawId (an exact id) is frozen and written as it is
        }
      }
    }
  }
  return holes;
}

function putBack(holes: readonly Hole[]): void {
  for (const { holder, key, text } of holes) (holder as Record<string, Json>)[key] = text;
}

/** The bytes of one long string, slice by slice, as the inside of a JSON string. */
function* stringChunks(text: string): Generator<Uint8Array> {
  // Most long strings (base64, text) have nothing to escape: their slices are
  // encoded as they are, without a JSON.stringify and a copy of each slice.
  const escape = NEEDS_ESCAPE.test(text) || !text.isWellFormed();
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + SLICE_CHARS);
    // Never split a surrogate pair between two slices.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    const slice = text.slice(i, end);
    yield encoder.encode(escape ? JSON.stringify(slice).slice(1, -1) : slice);
    i = end;
  }
}

/**
 * Serializes a message as a series of byte chunks that end with a newline:
 * the text around the long strings, and each long string in slices of
 * {@linkcode SLICE_CHARS} characters, escaped as JSON. The bytes are the
 * same as those of `JSON.stringify(message) + "\n"`.
 *
 * The text around the long strings is made at once, so a message that cannot
 * be serialized (a RangeError of a deep value) throws here, at the call, and
 * not later in the writer's loop; the slices are made while the sink takes
 * them. The message is the same after the call.
 */
export function serializeInChunks(message: Message): Iterable<Uint8Array> {
  const marker = `${crypto.randomUUID()}:`;
  const holes = takeLongStrings(message as unknown as Json, marker);
  let json: string;
  try {
    json = JSON.stringify(message);
  } finally {
    putBack(holes);
  }
  return chunksOf(json, marker, holes.map((hole) => hole.text));
}

function* chunksOf(json: string, marker: string, long: string[]): Generator<Uint8Array> {
  let position = 0;
  for (let at = json.indexOf(marker); at !== -1; at = json.indexOf(marker, position)) {
    const digitsStart = at + marker.length;
    let digitsEnd = digitsStart;
    while (json.charCodeAt(digitsEnd) >= 0x30 && json.charCodeAt(digitsEnd) <= 0x39) digitsEnd++;
    yield encoder.encode(json.slice(position, at));
    const index = Number(json.slice(digitsStart, digitsEnd));
    yield* stringChunks(long[index]!);
    position = digitsEnd;
  }
  yield encoder.encode(json.slice(position) + "\n");
}
