/**
 * The skeleton of a large line: the line parsed with its long strings left
 * as bytes of the line. A 64 MiB tool result is mostly one or a few long
 * strings (text, base64 data); decoding them to JS strings, parsing them and
 * encoding them again makes three more copies of the payload. The skeleton
 * replaces each long string by a short placeholder (the first bytes of the
 * string, then a marker), parses the small rest, lets the rules work on it,
 * and writes the original bytes of each long string back in place of its
 * placeholder. The bytes out are the bytes in, for every long string.
 *
 * The checks that JSON.parse would make on a long string are made here on
 * its bytes: valid UTF-8 (one native pass over the line), no control
 * character, and only valid escapes.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "./message.ts";
import { nestingDepth } from "./parse.ts";

/** A string with at least this many bytes between its quotes stays as bytes. */
export const LONG_STRING_BYTES = 64 * 1024;

/** The bytes of a long string that its placeholder keeps, so rules can read its start. */
const PREFIX_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The piece of a line that one decode of {@linkcode isUtf8} checks. */
const UTF8_CHECK_BYTES = 1024 * 1024;

/**
 * Whether `bytes` are valid UTF-8, checked a piece at a time: a large line
 * costs the string of one piece at a time, not a second copy of itself.
 * (`isUtf8` of `node:buffer` would start Deno's Node.js compatibility layer
 * at every start of the bridge: about 10 ms and 4 MiB.)
 */
export function isUtf8(bytes: Uint8Array): boolean {
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  try {
    for (let at = 0; at < bytes.length; at += UTF8_CHECK_BYTES) {
      strict.decode(bytes.subarray(at, at + UTF8_CHECK_BYTES), { stream: true });
    }
    strict.decode(); // a sequence cut at the end of the line
    return true;
  } catch {
    return false;
  }
}

/** A line whose long strings are still bytes of the line. */
export interface Skeleton {
  /** The parsed skeleton: each long string is its placeholder. */
  readonly value: Json;
  /** The line; the long strings are ranges of it. */
  readonly line: Uint8Array;
  /** `[start, end)` of the content (between the quotes) of each long string. */
  readonly ranges: readonly (readonly [number, number])[];
  /** What follows the prefix in a placeholder: U+0001, a nonce, ":", then the index. */
  readonly marker: string;
}

/** True when the escape at `i` (a backslash) is valid JSON; gives its length, else 0. */
function escapeLength(line: Uint8Array, i: number, end: number): number {
  const next = line[i + 1];
  if (next === 0x75) { // \uXXXX
    if (i + 6 > end) return 0;
    for (let k = i + 2; k < i + 6; k++) {
      const h = line[k]!;
      const hex = (h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66);
      if (!hex) return 0;
    }
    return 6;
  }
  // " \ / b f n r t
  return next === 0x22 || next === 0x5c || next === 0x2f || next === 0x62 || next === 0x66 ||
      next === 0x6e || next === 0x72 || next === 0x74
    ? 2
    : 0;
}

/** True for the bytes that end a run of plain string content: a quote, a backslash, a control character. */
const isSpecial = (c: number) => c === QUOTE || c === BACKSLASH || c < 0x20;

/** Strings shorter than this are scanned byte by byte: a word view costs more than it saves. */
const BYTE_SCAN = 32;

/**
 * The first quote, backslash or control character at or after `from`, or
 * -1: one pass for the three, where a search for each cost three passes over
 * a long string. Four bytes at a time past the first few: with
 * `has(x) = (x - 0x01010101) & ~x & 0x80808080` (non-zero when a byte of `x`
 * is zero), a word holds a quote when `has(w ^ 0x22222222)`, a backslash when
 * `has(w ^ 0x5c5c5c5c)`, and a byte below 0x20 when
 * `(w - 0x20202020) & ~w & 0x80808080` is not zero; the bytes of the first
 * such word are then looked at one by one.
 */
export function nextSpecial(line: Uint8Array, from: number): number {
  const end = line.length;
  let i = from;
  const head = Math.min(end, from + BYTE_SCAN);
  for (; i < head; i++) if (isSpecial(line[i]!)) return i;
  for (; i < end && ((line.byteOffset + i) & 3) !== 0; i++) if (isSpecial(line[i]!)) return i;
  // Block by block: each call of plainWords is short (see there).
  for (let words = 0; end - i >= 4; i += words * 4) {
    words = Math.min((end - i) >> 2, BLOCK_WORDS);
    const plain = plainWords(new Uint32Array(line.buffer, line.byteOffset + i, words));
    if (plain < words) {
      i += plain * 4;
      break;
    }
  }
  for (; i < end; i++) if (isSpecial(line[i]!)) return i;
  return -1;
}

/** The words of one call of {@linkcode plainWords}: 256 KiB. */
const BLOCK_WORDS = 64 * 1024;

/**
 * How many words of `view` come before the first that holds a special byte.
 * Called on blocks of a long string, not on the whole of it: V8 compiles a
 * loop that runs for a long time while it runs (on-stack replacement), and
 * when a buffer of a large line was given back (`transfer(0)`) that code was
 * thrown away and the whole scan of the next large line ran about seven
 * times slower. A short function called many times is compiled as a whole,
 * and a lost compilation costs one block.
 */
function plainWords(view: Uint32Array): number {
  const words = view.length;
  let k = 0;
  for (; k < words; k++) {
    const w = view[k]!;
    const q = w ^ 0x22222222;
    const b = w ^ 0x5c5c5c5c;
    const hit = ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b) | ((w - 0x20202020) & ~w);
    if ((hit & 0x80808080) !== 0) break;
  }
  return k;
}

/**
 * Finds the closing quote of the string whose content starts at `start`,
 * checking each escape on the way. Returns -1 for an unterminated string, a
 * control character (JSON.parse refuses it in any string) or an escape that
 * is not valid.
 */
function stringEnd(line: Uint8Array, start: number): number {
  for (let p = start;;) {
    const i = nextSpecial(line, p);
    if (i === -1) return -1;
    if (line[i] === QUOTE) return i;
    if (line[i] !== BACKSLASH) return -1; // a control character
    const n = escapeLength(line, i, line.length);
    if (n === 0) return -1;
    p = i + n;
  }
}

/** The end of the prefix of a long string: not inside an escape, not inside a UTF-8 sequence. */
function prefixEnd(line: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end && i - start < PREFIX_BYTES) {
    i += line[i] === BACKSLASH ? escapeLength(line, i, end) : 1;
  }
  while (i < end && (line[i]! & 0xc0) === 0x80) i--; // back to the start of a code point
  return Math.min(i, end);
}

/**
 * Parses a line as a skeleton. Undefined when the line has no long string
 * (the caller parses it as usual); `"invalid"` for a line that is not valid
 * UTF-8 or JSON.
 */
export function parseSkeleton(
  line: Uint8Array,
  maxDepth = Infinity,
): Skeleton | "invalid" | undefined {
  const ranges: [number, number][] = [];
  const parts: Uint8Array[] = [];
  const marker = `\u0001${crypto.randomUUID()}:`;
  const markerJson = JSON.stringify(marker).slice(1, -1);
  let copied = 0; // bytes of the line already in `parts`
  for (let p = line.indexOf(QUOTE); p !== -1; p = line.indexOf(QUOTE, p)) {
    const start = p + 1;
    const end = stringEnd(line, start);
    if (end === -1) return "invalid";
    if (end - start >= LONG_STRING_BYTES) {
      if (ranges.length === 0 && !isUtf8(line)) return "invalid";
      const keep = prefixEnd(line, start, end);
      parts.push(line.subarray(copied, keep), encoder.encode(markerJson + ranges.length));
      ranges.push([start, end]);
      copied = end;
    }
    p = end + 1;
  }
  if (ranges.length === 0) return undefined;
  parts.push(line.subarray(copied));
  const size = parts.reduce((n, part) => n + part.length, 0);
  const text = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    text.set(part, offset);
    offset += part.length;
  }
  // The nesting of the line is the nesting of its skeleton, which is small to scan.
  if (maxDepth !== Infinity && nestingDepth(text, maxDepth) === Infinity) return "invalid";
  try {
    return { value: JSON.parse(decoder.decode(text)), line, ranges, marker };
  } catch {
    return "invalid";
  }
}

/** The skeleton of each result that came from a skeleton, for the writer and the rules. */
const skeletons = new WeakMap<object, Skeleton>();

/**
 * The skeleton that a result (or another value of a message) came from.
 *
 * @example
 * ```ts
 * import { parseLargeMessage, skeletonOf } from "./skeleton.ts";
 * const text = `{"id":1,"result":{"blob":"${"a".repeat(70_000)}"}}`;
 * const message = parseLargeMessage(new TextEncoder().encode(text), 64);
 * if (typeof message !== "object") throw new Error();
 * const sk = skeletonOf(message.result);
 * // The long string is still bytes of the line; the value holds a short placeholder.
 * if (sk === undefined || sk.ranges.length !== 1 || JSON.stringify(sk.value).length > 1_000) {
 *   throw new Error();
 * }
 * if (skeletonOf({}) !== undefined) throw new Error();
 * ```
 */
export function skeletonOf(value: Json | undefined): Skeleton | undefined {
  return typeof value === "object" && value !== null ? skeletons.get(value) : undefined;
}

/**
 * Parses a large message of the upstream server as a skeleton: its result
 * keeps the skeleton for the writer. Undefined for a line without a long
 * string (parse it as usual); `"invalid"` for a line that is not valid JSON,
 * is deeper than `maxDepth` or is not an object.
 *
 * @example
 * ```ts
 * import { parseLargeMessage, skeletonOf } from "./skeleton.ts";
 * const encode = (text: string) => new TextEncoder().encode(text);
 * const text = `{"jsonrpc":"2.0","id":1,"result":{"blob":"${"a".repeat(70_000)}"}}`;
 * const message = parseLargeMessage(encode(text), 64);
 * if (message === undefined || message === "invalid") throw new Error();
 * if (message.id !== 1 || skeletonOf(message.result) === undefined) throw new Error();
 * if (parseLargeMessage(encode('{"id":1,"result":{}}'), 64) !== undefined) throw new Error("small");
 * if (parseLargeMessage(encode(`["${"a".repeat(70_000)}"]`), 64) !== "invalid") throw new Error();
 * ```
 */
export function parseLargeMessage(
  line: Uint8Array,
  maxDepth: number,
): JsonObject | "invalid" | undefined {
  const sk = parseSkeleton(line, maxDepth);
  if (sk === undefined || sk === "invalid") return sk;
  if (!isObject(sk.value)) return "invalid";
  const result = sk.value.result;
  if (typeof result === "object" && result !== null) skeletons.set(result, sk);
  return sk.value;
}

/**
 * Finds each placeholder in a JSON text made from the skeleton: the content
 * of its string token, `[open, close)` in the text, and its index. A marker
 * after an odd number of backslashes is text inside another string, not a
 * placeholder.
 */
function* placeholders(json: string, sk: Skeleton): Generator<[number, number, number]> {
  const escaped = JSON.stringify(sk.marker).slice(1, -1);
  for (let at = json.indexOf(escaped); at !== -1; at = json.indexOf(escaped, at + 1)) {
    let slashes = 0;
    while (json.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 1) continue;
    let close = at + escaped.length;
    while (json.charCodeAt(close) >= 0x30 && json.charCodeAt(close) <= 0x39) close++;
    if (json.charCodeAt(close) !== QUOTE) continue;
    // The opening quote: the nearest quote before that no backslash escapes.
    let open = at - 1;
    for (;; open--) {
      if (json.charCodeAt(open) !== QUOTE) continue;
      let n = 0;
      while (json.charCodeAt(open - 1 - n) === BACKSLASH) n++;
      if (n % 2 === 0) break;
    }
    const index = Number(json.slice(at + escaped.length, close));
    if (index < sk.ranges.length) yield [open + 1, close, index];
  }
}

/**
 * Serializes a message made from a skeleton as chunks that end with a
 * newline: the text around the placeholders, and for each placeholder the
 * original bytes of its long string (a view of the line, not a copy).
 * Use each chunk before asking for the next: after the last one the line's
 * memory is given back ({@linkcode releaseLine}), as the line is written once.
 */
export function* serializeSkeleton(message: unknown, sk: Skeleton): Generator<Uint8Array> {
  const json = JSON.stringify(message);
  try {
    let position = 0;
    for (const [open, close, index] of placeholders(json, sk)) {
      yield encoder.encode(json.slice(position, open));
      const [start, end] = sk.ranges[index]!;
      yield sk.line.subarray(start, end);
      position = close;
    }
    yield encoder.encode(json.slice(position) + "\n");
  } finally {
    releaseLine(sk);
  }
}

/**
 * Gives the memory of a written line back at once, when the line is the
 * whole of its buffer (the framer's buffer of a large line): the garbage
 * collector frees an external buffer of 63 MiB only at its next full
 * collection, and a second large result before it would hold both. The
 * line is written once; after it nothing reads the skeleton's bytes.
 */
function releaseLine(sk: Skeleton): void {
  const { buffer, byteOffset, byteLength } = sk.line;
  if (buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength) {
    buffer.transfer(0);
  }
}

/**
 * The JSON text of a value of the skeleton with each long string whole: for
 * a rule that needs the text itself (the text mirror of a tools/call
 * result). It costs the size of the strings, so the rules call it only then.
 *
 * @example
 * ```ts
 * import { materializeJson, parseLargeMessage, skeletonOf } from "./skeleton.ts";
 * const result = { blob: "a".repeat(70_000) };
 * const line = new TextEncoder().encode(JSON.stringify({ id: 1, result }));
 * const message = parseLargeMessage(line, 64);
 * if (typeof message !== "object") throw new Error();
 * const sk = skeletonOf(message.result)!;
 * if (materializeJson(JSON.stringify(message.result), sk) !== JSON.stringify(result)) throw new Error();
 * ```
 */
export function materializeJson(json: string, sk: Skeleton): string {
  let out = "";
  let position = 0;
  for (const [open, close, index] of placeholders(json, sk)) {
    const [start, end] = sk.ranges[index]!;
    out += json.slice(position, open) + decoder.decode(sk.line.subarray(start, end));
    position = close;
  }
  return out + json.slice(position);
}

/** True when a string of the skeleton is a placeholder (a long string). */
export function isPlaceholder(value: string, sk: Skeleton): boolean {
  return value.includes(sk.marker);
}
