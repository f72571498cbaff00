/**
 * The wire of the HTTP/1.1 client (`http1.ts`): a connection with its read
 * buffer, the response head (status line and header fields) and how the
 * body ends (its framing).
 *
 * @module
 */

import { HEADER_NAME } from "./http_headers.ts";

/** The response was not HTTP/1.1 as this client reads it. */
export class HttpProtocolError extends Error {
  override name = "HttpProtocolError";
}

/** The largest response head (status line and headers). */
export const MAX_HEAD = 64 * 1024;
/** The read buffer of a connection; a head must fit in it. */
const BUFFER_BYTES = MAX_HEAD + 1024;
/** The largest chunk-size line or trailer line of a chunked body. */
const MAX_LINE = 4096;
const utf8 = new TextDecoder();

/** The text of bytes read as Latin-1 (ISO 8859-1): each byte one character. */
export function latin1Text(bytes: Uint8Array): string {
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  // ASCII is the same in UTF-8, and the decoder is the fast way to a string.
  if (ascii) return utf8.decode(bytes);
  let text = "";
  for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]!);
  return text;
}

/** Closes a connection that may be closed already. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/** Where `\r\n\r\n` starts in `bytes` between `from` and `to`, or -1. */
export function headEnd(bytes: Uint8Array, from: number, to: number): number {
  // The search stays within the read bytes: past `to`, indexOf would scan the
  // rest of the buffer (64 KiB) for nothing, on each call before a head is in.
  const read = bytes.subarray(from, to);
  for (let i = read.indexOf(13); i !== -1 && i + 3 < read.length; i = read.indexOf(13, i + 1)) {
    if (read[i + 1] === 10 && read[i + 2] === 13 && read[i + 3] === 10) return from + i;
  }
  return -1;
}

/** One connection with its read buffer: bytes `start` to `end` of `buffer` are read and unused. */
export class Connection {
  readonly buffer = new Uint8Array(BUFFER_BYTES);
  start = 0;
  end = 0;
  idleSince = 0;
  /** The bytes read into the buffer in the connection's life. */
  received = 0;
  closed = false;

  constructor(readonly conn: Deno.Conn, readonly origin: string) {}

  get buffered(): number {
    return this.end - this.start;
  }

  /** Reads more into the buffer; false at the end of the connection. */
  async fill(): Promise<boolean> {
    if (this.start === this.end) this.start = this.end = 0;
    else if (this.end === this.buffer.length) {
      this.buffer.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    const n = await this.conn.read(this.buffer.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    this.received += n;
    return true;
  }

  /** Takes up to `max` buffered bytes as a copy (the buffer is reused). */
  take(max: number): Uint8Array {
    const n = Math.min(max, this.buffered);
    const out = this.buffer.slice(this.start, this.start + n);
    this.start += n;
    return out;
  }

  /** Copies up to `view.length` buffered bytes into `view`; how many. */
  takeInto(view: Uint8Array): number {
    const n = Math.min(view.length, this.buffered);
    view.set(this.buffer.subarray(this.start, this.start + n));
    this.start += n;
    return n;
  }

  /** A line (without its CRLF) that is in the buffer already, or undefined. */
  bufferedLine(): string | undefined {
    const nl = this.buffer.subarray(this.start, this.end).indexOf(10);
    if (nl === -1) return undefined;
    const text = latin1Text(this.buffer.subarray(this.start, this.start + nl));
    this.start += nl + 1;
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }

  /** One CRLF-terminated line (without the CRLF), for chunk sizes and trailers. */
  async line(): Promise<string> {
    for (;;) {
      const line = this.bufferedLine();
      if (line !== undefined) return line;
      if (this.buffered > MAX_LINE) throw new HttpProtocolError("a chunk line is too long");
      if (!await this.fill()) throw new HttpProtocolError("the body ended early");
    }
  }

  async write(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeQuietly(this.conn);
  }
}

/**
 * The header fields of a response by lower-case name, values of one name
 * joined with ", ": what the HTTP link reads of them (`get`), without the
 * cost of a `Headers` object per response.
 */
export class HeaderFields {
  readonly #fields = new Map<string, string>();

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const before = this.#fields.get(key);
    this.#fields.set(key, before === undefined ? value : `${before}, ${value}`);
  }

  get(name: string): string | null {
    return this.#fields.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#fields.has(name.toLowerCase());
  }
}

/** The status line and header fields of a response. */
export interface Head {
  readonly status: number;
  readonly headers: HeaderFields;
  readonly keepAlive: boolean;
}

/** How the body of a response ends. */
export type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; remaining: number }
  | { readonly kind: "chunked"; remaining: number }
  | { readonly kind: "close" };

/** Parses a response head (without its blank line). */
export function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: .*)?$/.exec(lines[0]!);
  if (!status) throw new HttpProtocolError("not an HTTP/1.x status line");
  const headers = new HeaderFields();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon) : "";
    const value = line.slice(colon + 1).trim();
    // No obsolete line folding, no name that is not a token, no CR, LF or NUL in a value.
    if (!HEADER_NAME.test(name) || /[\r\n\0]/.test(value)) {
      throw new HttpProtocolError("a header line is not valid");
    }
    headers.append(name, value);
  }
  const connection = headers.get("connection")?.toLowerCase() ?? "";
  const keepAlive = status[1] === "1"
    ? !/(^|,)\s*close\s*(,|$)/.test(connection)
    : /(^|,)\s*keep-alive\s*(,|$)/.test(connection);
  return { status: Number(status[2]), headers, keepAlive };
}

/** How the body of the response of a POST ends (RFC 9112, section 6.3). */
export function framingOf(head: Head): Framing {
  if (head.status === 204 || head.status === 304) return { kind: "none" };
  const coding = head.headers.get("transfer-encoding");
  if (coding !== null) {
    const last = coding.split(",").pop()!.trim().toLowerCase();
    return last === "chunked" ? { kind: "chunked", remaining: 0 } : { kind: "close" };
  }
  const length = head.headers.get("content-length");
  if (length === null) return { kind: "close" };
  // Several equal values are one (RFC 9110, section 8.6); anything else is not valid.
  const values = new Set(length.split(",").map((v) => v.trim()));
  const value = values.size === 1 ? [...values][0]! : "";
  if (!/^\d{1,15}$/.test(value)) throw new HttpProtocolError("the Content-Length is not valid");
  return Number(value) === 0 ? { kind: "none" } : { kind: "length", remaining: Number(value) };
}
