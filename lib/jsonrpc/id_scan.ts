/**
 * Finds the id of a line that cannot be parsed, without parsing it.
 *
 * The head scan walks the bytes from the start and reads the member `id` of
 * the top-level object. The tail scan reads a line that is too long from its
 * end: the TypeScript SDK 1.x writes the id as the last member, so the line
 * ends with `"id":<value>}`.
 *
 * @module
 */

import { idOfToken, idString, type RequestId } from "./message.ts";

/**
 * What a scan found.
 *
 * @example
 * ```ts
 * import { type IdScan, scanIdFromHead } from "./id_scan.ts";
 * const scan: IdScan = scanIdFromHead(new TextEncoder().encode('{"id":[1],"method":"ping"}'));
 * // An id member of another type: found, with a null id (the error response has a null id).
 * if (!scan.found || scan.id !== null) throw new Error();
 * ```
 */
export type IdScan =
  /** No id member was found. */
  | { readonly found: false }
  /** An id member with a string or an integer. */
  | { readonly found: true; readonly id: RequestId }
  /** An id member with null or another type. */
  | { readonly found: true; readonly id: null };

const NOT_FOUND: IdScan = { found: false };
const BAD_ID: IdScan = { found: true, id: null };

/** Where the value of the member `id` lies in the bytes: [start, end), or a scan outcome. */
type Range = readonly [number, number] | IdScan;

function isSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

/** Reads a JSON string that starts at `start` (a quote); returns its end. */
function stringEnd(bytes: Uint8Array, start: number): number {
  for (let i = start + 1; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x5c) i++;
    else if (b === 0x22) return i + 1;
  }
  return -1;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The text of `bytes[start, end)` without the spaces around it; undefined for invalid UTF-8. */
function tokenAt(bytes: Uint8Array, start: number, end: number): string | undefined {
  try {
    return decoder.decode(bytes.subarray(start, end)).trim();
  } catch {
    return undefined;
  }
}

/** The id of a range: the same rule as the parsed path ({@linkcode idOfToken}). */
function idOf(bytes: Uint8Array, range: Range): IdScan {
  if (!Array.isArray(range)) return range as IdScan;
  const [start, end] = range as readonly [number, number];
  const token = tokenAt(bytes, start, end);
  const id = token === undefined ? undefined : idOfToken(token);
  return id === undefined ? BAD_ID : { found: true, id };
}

/**
 * The token (the JSON text) of the member `id` of the top-level object of a
 * valid JSON line, found from its end, then from its start; undefined when
 * neither scan finds it. `expected` is the text the caller expects (the
 * parsed id written back): when the bytes are that text, it is returned
 * without a decode (the common case costs a byte comparison).
 *
 * @example
 * ```ts
 * import { idTokenOf } from "./id_scan.ts";
 * const encode = (text: string) => new TextEncoder().encode(text);
 * // The token as the client wrote it, found from the end, then from the start.
 * if (idTokenOf(encode('{"method":"ping","id":1.0}')) !== "1.0") throw new Error();
 * if (idTokenOf(encode('{"id":"a","method":"ping"}')) !== '"a"') throw new Error();
 * if (idTokenOf(encode('{"method":"ping"}')) !== undefined) throw new Error();
 * ```
 */
export function idTokenOf(bytes: Uint8Array, expected?: string): string | undefined {
  let range = tailRange(bytes);
  let token = Array.isArray(range) ? primitiveToken(bytes, range, expected) : undefined;
  if (token === undefined) {
    range = headRange(bytes);
    token = Array.isArray(range) ? primitiveToken(bytes, range, expected) : undefined;
  }
  return token;
}

function primitiveToken(bytes: Uint8Array, range: Range, expected?: string): string | undefined {
  let [start, end] = range as readonly [number, number];
  while (start < end && isSpace(bytes[start])) start++;
  while (end > start && isSpace(bytes[end - 1])) end--;
  if (expected !== undefined && sameText(bytes, start, end, expected)) return expected;
  const token = tokenAt(bytes, start, end);
  // The tail scan can stop inside a nested object: `{"a":{"id":1}}`.
  return token !== undefined && PRIMITIVE.test(token) ? token : undefined;
}

/** True when `bytes[start, end)` are the characters of an ASCII `text`. */
function sameText(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (bytes[start + i] !== text.charCodeAt(i)) return false; // also false for non-ASCII
  }
  return true;
}

/** A string or a literal token: nothing of an object or an array. */
const PRIMITIVE = /^(?:"[^]*"|[-+.0-9eE]+|true|false|null)$/;

/**
 * Scans from the start of a line for the member `id` of the top-level object.
 * Nested members named `id` do not count. A line cut short (the head of a
 * too-long line) gives `found: false` when the id is not in the bytes.
 *
 * @example
 * ```ts
 * import { scanIdFromHead } from "./id_scan.ts";
 * const scan = scanIdFromHead(new TextEncoder().encode('{"params":{"id":1},"id":"b-2",'));
 * if (!scan.found || scan.id !== "b-2") throw new Error("expected b-2");
 * ```
 */
export function scanIdFromHead(bytes: Uint8Array): IdScan {
  return idOf(bytes, headRange(bytes));
}

function headRange(bytes: Uint8Array): Range {
  let i = 0;
  while (isSpace(bytes[i])) i++;
  if (bytes[i] !== 0x7b) return NOT_FOUND;
  let depth = 0;
  for (; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x22) {
      const end = stringEnd(bytes, i);
      if (end === -1) return NOT_FOUND;
      if (depth === 1 && end - i === 4 && bytes[i + 1] === 0x69 && bytes[i + 2] === 0x64) {
        let j = end;
        while (isSpace(bytes[j])) j++;
        if (bytes[j] === 0x3a) return valueRange(bytes, j + 1);
      }
      i = end - 1;
    } else if (b === 0x7b || b === 0x5b) {
      depth++;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
      if (depth === 0) return NOT_FOUND;
    }
  }
  return NOT_FOUND;
}

/** The range of the value of a member that starts at `start`, after the colon. */
function valueRange(bytes: Uint8Array, start: number): Range {
  let i = start;
  while (isSpace(bytes[i])) i++;
  if (i >= bytes.length) return NOT_FOUND;
  if (bytes[i] === 0x22) {
    const end = stringEnd(bytes, i);
    return end === -1 ? NOT_FOUND : [i, end];
  }
  let end = i;
  while (end < bytes.length && bytes[end] !== 0x2c && bytes[end] !== 0x7d && !isSpace(bytes[end])) {
    end++;
  }
  if (end === bytes.length) return NOT_FOUND; // the value may go on past the head
  return [i, end];
}

/**
 * Scans the end of a line for a last member `"id":<value>` of the top-level
 * object, as the TypeScript SDK 1.x writes it.
 *
 * @example
 * ```ts
 * import { scanIdFromTail } from "./id_scan.ts";
 * const encode = (text: string) => new TextEncoder().encode(text);
 * const scan = scanIdFromTail(encode(`{"result":{"text":"${"a".repeat(100)}"},"id":7}`));
 * if (!scan.found || scan.id !== 7) throw new Error();
 * if (scanIdFromTail(encode('{"id":7,"method":"ping"}')).found) throw new Error("id is not last");
 * ```
 */
export function scanIdFromTail(bytes: Uint8Array): IdScan {
  return idOf(bytes, tailRange(bytes));
}

function tailRange(bytes: Uint8Array): Range {
  let end = bytes.length;
  while (end > 0 && isSpace(bytes[end - 1])) end--;
  if (bytes[end - 1] !== 0x7d) return NOT_FOUND;
  end--;
  while (end > 0 && isSpace(bytes[end - 1])) end--;
  const valueEnd = end;
  let start: number;
  if (bytes[valueEnd - 1] === 0x22) {
    // A string value: walk back to its opening quote, past escaped quotes.
    start = -1;
    for (let i = valueEnd - 2; i >= 0; i--) {
      // A native search: a long last string costs no loop over its bytes.
      i = bytes.lastIndexOf(0x22, i);
      if (i === -1) break;
      let slashes = 0;
      for (let k = i - 1; k >= 0 && bytes[k] === 0x5c; k--) slashes++;
      if (slashes % 2 === 0) {
        start = i;
        break;
      }
    }
    if (start === -1) return NOT_FOUND;
  } else {
    start = valueEnd;
    while (start > 0 && bytes[start - 1] !== 0x3a && bytes[start - 1] !== 0x2c) start--;
  }
  let k = start;
  while (k > 0 && isSpace(bytes[k - 1])) k--;
  if (bytes[k - 1] !== 0x3a) return NOT_FOUND;
  k--;
  while (k > 0 && isSpace(bytes[k - 1])) k--;
  // The key must be exactly "id".
  if (k < 4 || bytes[k - 1] !== 0x22 || bytes[k - 2] !== 0x64 || bytes[k - 3] !== 0x69) {
    return NOT_FOUND;
  }
  if (bytes[k - 4] !== 0x22) return NOT_FOUND;
  let p = k - 4;
  while (p > 0 && isSpace(bytes[p - 1])) p--;
  // The member must follow a comma or the opening brace, not sit in a string.
  if (p > 0 && bytes[p - 1] !== 0x2c && bytes[p - 1] !== 0x7b) return NOT_FOUND;
  return [start, valueEnd];
}

/**
 * The id of the bridge's own requests starts with this prefix by default.
 *
 * @example
 * ```ts
 * import { isBridgeId } from "./id_scan.ts";
 * if (!isBridgeId("bridge-1", "bridge-") || isBridgeId("client-1", "bridge-")) throw new Error();
 * if (isBridgeId(1, "bridge-")) throw new Error("a number is never the bridge's id");
 * ```
 */
export function isBridgeId(id: RequestId, prefix: string): boolean {
  return idString(id)?.startsWith(prefix) ?? false;
}
