/**
 * Large messages: the bridge writes them in slices, so that it never holds
 * the serialized text of a 64 MiB result next to the result itself.
 *
 * @module
 */

import { isObject, type Json, type Message } from "./message.ts";

/** A line above this size marks its result as large. */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

/** The characters of one slice of a large string. */
const SLICE_CHARS = 256 * 1024;

const large = new WeakSet<object>();
const encoder = new TextEncoder();

/** Marks a value that came from a large line. */
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

/**
 * Serializes a message as a series of byte chunks that end with a newline:
 * the text around the long strings, and each long string in slices of
 * {@linkcode SLICE_CHARS} characters, escaped as JSON. The bytes are the
 * same as those of `JSON.stringify(message) + "\n"`.
 *
 * @example
 * ```ts
 * import { serializeInChunks } from "./large.ts";
 * const message = { jsonrpc: "2.0" as const, id: 1, result: { text: "é".repeat(600_000) } };
 * const text = [...serializeInChunks(message)].map((c) => new TextDecoder().decode(c)).join("");
 * if (text !== JSON.stringify(message) + "\n") throw new Error();
 * ```
 */
export function* serializeInChunks(message: Message): Generator<Uint8Array> {
  const long: string[] = [];
  const marker = `\u0001${crypto.randomUUID()}:`;
  const json = JSON.stringify(
    message,
    (_key, value) =>
      typeof value === "string" && value.length > SLICE_CHARS
        ? marker + (long.push(value) - 1)
        : value,
  );
  // A marker serializes as "\u0001<uuid>:<n>", with the control character escaped.
  const escaped = JSON.stringify(marker).slice(1, -1);
  let position = 0;
  for (let at = json.indexOf(escaped); at !== -1; at = json.indexOf(escaped, position)) {
    const digitsStart = at + escaped.length;
    let digitsEnd = digitsStart;
    while (json.charCodeAt(digitsEnd) >= 0x30 && json.charCodeAt(digitsEnd) <= 0x39) digitsEnd++;
    yield encoder.encode(json.slice(position, at));
    const text = long[Number(json.slice(digitsStart, digitsEnd))]!;
    for (let i = 0; i < text.length;) {
      let end = Math.min(text.length, i + SLICE_CHARS);
      // Never split a surrogate pair between two slices.
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      yield encoder.encode(JSON.stringify(text.slice(i, end)).slice(1, -1));
      i = end;
    }
    position = digitsEnd;
  }
  yield encoder.encode(json.slice(position) + "\n");
}
