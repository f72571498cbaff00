/**
 * A small HTTP/1.1 client for the POSTs of the HTTP link, when no proxy
 * applies (with a proxy variable the link uses fetch, which reads the proxy
 * variables). Keep-alive connections are pooled per origin; each carries one
 * exchange at a time. The answer is a standard `Response` whose body is a
 * byte stream: a BYOB reader (a large JSON body of a known length) gets the
 * bytes read straight into its buffer.
 *
 * Why not fetch for every POST: on loopback, a small POST through Deno's
 * fetch costs the process 400-550 µs of CPU, this client 175-205 µs, and on
 * a machine whose cores the bridge shares with the client and the server
 * that CPU is latency (a small tools/call of the benchmark). What it does
 * not do: HTTP/2, compression (it sends no Accept-Encoding, so a server
 * answers with identity), proxies, redirects (the link follows those), and
 * request bodies other than one buffer.
 *
 * @module
 */

/** The options of {@linkcode Http1Client}. */
export interface Http1Options {
  /** PEM certificates trusted besides the default roots (https). */
  readonly caCerts?: readonly string[];
  /** An idle connection older than this is closed instead of reused. */
  readonly idleMs?: number;
}

/** One POST: its headers (without Host and Content-Length), its body and its signal. */
export interface PostInit {
  readonly headers: Headers;
  readonly body: string;
  readonly signal: AbortSignal;
}

/** The response was not HTTP/1.1 as this client reads it. */
export class HttpProtocolError extends Error {
  override name = "HttpProtocolError";
}

/** The connection ended before the first byte of the response (a stale keep-alive one). */
class EarlyEnd extends Error {}

/**
 * Below 5 s, the keep-alive timeout of Node.js servers, so that a pooled
 * connection is rarely one that the server is closing.
 */
const DEFAULT_IDLE_MS = 4000;
/** Idle connections kept per origin. */
const MAX_IDLE = 32;
/** The largest response head (status line and headers). */
const MAX_HEAD = 64 * 1024;
/** The read buffer of a connection; a head must fit in it. */
const BUFFER_BYTES = MAX_HEAD + 1024;
/** The largest chunk-size line or trailer line of a chunked body. */
const MAX_LINE = 4096;
/** Headers that this client writes itself. */
const OWN_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding"]);
const enc = new TextEncoder();

/** The bytes of a text whose characters are all below 256 (a ByteString: HTTP heads). */
function latin1(text: string): Uint8Array {
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return enc.encode(text);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function latin1Text(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return text;
}

/** Enqueues a chunk (which detaches its buffer); returns its length. */
function enqueue(controller: ReadableByteStreamController, chunk: Uint8Array): number {
  const length = chunk.length;
  controller.enqueue(chunk);
  return length;
}

/** Where `\r\n\r\n` starts in `bytes` from `from`, or -1. */
function headEnd(bytes: Uint8Array, from: number, to: number): number {
  for (let i = bytes.indexOf(13, from); i !== -1 && i + 3 < to; i = bytes.indexOf(13, i + 1)) {
    if (bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/** One connection with its read buffer: bytes `start` to `end` of `buffer` are read and unused. */
class Connection {
  readonly buffer = new Uint8Array(BUFFER_BYTES);
  start = 0;
  end = 0;
  idleSince = 0;
  reused = false;
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
    return true;
  }

  /** Takes up to `max` buffered bytes as a copy (the buffer is reused). */
  take(max: number): Uint8Array {
    const n = Math.min(max, this.buffered);
    const out = this.buffer.slice(this.start, this.start + n);
    this.start += n;
    return out;
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
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** The status line and headers of a response. */
interface Head {
  readonly status: number;
  readonly headers: Headers;
  readonly keepAlive: boolean;
}

/** How the body of a response ends. */
type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; remaining: number }
  | { readonly kind: "chunked"; remaining: number }
  | { readonly kind: "close" };

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: .*)?$/.exec(lines[0]!);
  if (!status) throw new HttpProtocolError("not an HTTP/1.x status line");
  const headers = new Headers();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0 || line[0] === " " || line[0] === "\t") {
      throw new HttpProtocolError("a header line is not valid");
    }
    try {
      headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
    } catch {
      throw new HttpProtocolError("a header line is not valid");
    }
  }
  const connection = headers.get("connection")?.toLowerCase() ?? "";
  const keepAlive = status[1] === "1"
    ? !/(^|,)\s*close\s*(,|$)/.test(connection)
    : /(^|,)\s*keep-alive\s*(,|$)/.test(connection);
  return { status: Number(status[2]), headers, keepAlive };
}

function framingOf(head: Head): Framing {
  if (head.status === 204 || head.status === 304) return { kind: "none" };
  const coding = head.headers.get("transfer-encoding");
  if (coding !== null) {
    const last = coding.split(",").pop()!.trim().toLowerCase();
    return last === "chunked" ? { kind: "chunked", remaining: 0 } : { kind: "close" };
  }
  const length = head.headers.get("content-length");
  if (length === null) return { kind: "close" };
  // Several equal values are one (RFC 9110 8.6); anything else is not valid.
  const values = new Set(length.split(",").map((v) => v.trim()));
  const value = values.size === 1 ? [...values][0]! : "";
  if (!/^\d{1,15}$/.test(value)) throw new HttpProtocolError("the Content-Length is not valid");
  return Number(value) === 0 ? { kind: "none" } : { kind: "length", remaining: Number(value) };
}

/**
 * A pool of HTTP/1.1 connections and the POSTs over them.
 *
 * @example
 * ```ts ignore
 * import { Http1Client } from "./http1.ts";
 * const client = new Http1Client();
 * const response = await client.post(new URL("http://127.0.0.1:8080/mcp"), {
 *   headers: new Headers({ "content-type": "application/json" }),
 *   body: "{}",
 *   signal: new AbortController().signal,
 * });
 * console.log(response.status, await response.text());
 * client.close();
 * ```
 */
export class Http1Client {
  readonly #caCerts: string[] | undefined;
  readonly #idleMs: number;
  readonly #idle = new Map<string, Connection[]>();
  readonly #open = new Set<Connection>();
  #closed = false;

  constructor(options: Http1Options = {}) {
    this.#caCerts = options.caCerts && [...options.caCerts];
    this.#idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  }

  /** The connections open now (idle or busy), for the tests. */
  get openConnections(): number {
    return this.#open.size;
  }

  /**
   * POSTs `init.body` to `url`. Resolves with the response once its head is
   * read; its body streams from the connection. A reused connection that
   * ends before the first byte of the response (the server closed it while
   * idle) is replaced once by a new one. The signal closes the connection.
   */
  async post(url: URL, init: PostInit): Promise<Response> {
    const { signal } = init;
    signal.throwIfAborted();
    const bytes = this.#requestBytes(url, init);
    for (let attempt = 0;; attempt++) {
      const connection = this.#takeIdle(url.origin) ?? await this.#connect(url, signal);
      const onAbort = () => connection.close();
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await connection.write(bytes);
        const head = await this.#readHead(connection);
        return this.#response(connection, head, signal, onAbort);
      } catch (error) {
        signal.removeEventListener("abort", onAbort);
        this.#discard(connection);
        if (signal.aborted) throw signal.reason;
        const stale = connection.reused && attempt === 0 &&
          (error instanceof EarlyEnd || error instanceof Deno.errors.ConnectionReset ||
            error instanceof Deno.errors.BrokenPipe);
        if (!stale) throw error;
      }
    }
  }

  /** Closes every connection; a body being read fails. */
  close(): void {
    this.#closed = true;
    for (const connection of this.#open) connection.close();
    this.#open.clear();
    this.#idle.clear();
  }

  #requestBytes(url: URL, init: PostInit): Uint8Array {
    const body = enc.encode(init.body);
    let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    for (const [name, value] of init.headers) {
      if (!OWN_HEADERS.has(name)) head += `${name}: ${value}\r\n`;
    }
    head += `content-length: ${body.length}\r\n\r\n`;
    const headBytes = latin1(head);
    const out = new Uint8Array(headBytes.length + body.length);
    out.set(headBytes);
    out.set(body, headBytes.length);
    return out;
  }

  #takeIdle(origin: string): Connection | undefined {
    const idle = this.#idle.get(origin);
    const now = performance.now();
    for (let connection = idle?.pop(); connection; connection = idle?.pop()) {
      if (now - connection.idleSince < this.#idleMs && !connection.closed) {
        connection.reused = true;
        return connection;
      }
      this.#discard(connection);
    }
    return undefined;
  }

  async #connect(url: URL, signal: AbortSignal): Promise<Connection> {
    if (this.#closed) throw new Deno.errors.ConnectionRefused("the client is closed");
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    let conn: Deno.Conn;
    if (url.protocol === "https:") {
      const tls = await Deno.connectTls({
        hostname,
        port,
        alpnProtocols: ["http/1.1"],
        ...(this.#caCerts && { caCerts: this.#caCerts }),
      });
      try {
        await tls.handshake();
      } catch (error) {
        tls.close();
        throw error;
      }
      conn = tls;
    } else {
      const tcp = await Deno.connect({ hostname, port });
      tcp.setNoDelay(true);
      conn = tcp;
    }
    const connection = new Connection(conn, url.origin);
    this.#open.add(connection);
    if (signal.aborted || this.#closed) {
      this.#discard(connection);
      signal.throwIfAborted();
      throw new Deno.errors.ConnectionRefused("the client is closed");
    }
    return connection;
  }

  async #readHead(connection: Connection): Promise<Head> {
    for (let scanned = 0;;) {
      const at = headEnd(connection.buffer, connection.start + scanned, connection.end);
      if (at !== -1) {
        const head = parseHead(latin1Text(connection.buffer.subarray(connection.start, at)));
        connection.start = at + 4;
        // An interim response (100 Continue, 103 Early Hints) is followed by the real one.
        if (head.status < 200 && head.status !== 101) {
          scanned = 0;
          continue;
        }
        if (head.status === 101) throw new HttpProtocolError("an upgrade was not asked for");
        return head;
      }
      scanned = Math.max(0, connection.buffered - 3);
      if (connection.buffered >= MAX_HEAD) throw new HttpProtocolError("the head is too long");
      const empty = connection.buffered === 0;
      if (!await connection.fill()) {
        throw empty ? new EarlyEnd("the connection ended") : new HttpProtocolError("no head");
      }
    }
  }

  #response(
    connection: Connection,
    head: Head,
    signal: AbortSignal,
    onAbort: () => void,
  ): Response {
    const framing = framingOf(head);
    const finish = (ended: boolean) => {
      signal.removeEventListener("abort", onAbort);
      // Only a body read to its end leaves the connection ready for the next POST.
      if (ended && head.keepAlive && framing.kind !== "close" && connection.buffered === 0) {
        this.#release(connection);
      } else this.#discard(connection);
    };
    if (framing.kind === "none") {
      finish(true);
      return new Response(null, { status: head.status, headers: head.headers });
    }
    const source: UnderlyingByteSource = {
      type: "bytes",
      pull: async (controller) => {
        try {
          if (await this.#pull(connection, framing, controller)) {
            controller.close();
            controller.byobRequest?.respond(0);
            finish(true);
          }
        } catch (error) {
          finish(false);
          controller.error(signal.aborted ? signal.reason : error);
        }
      },
      cancel: () => finish(false),
    };
    return new Response(new ReadableStream(source), { status: head.status, headers: head.headers });
  }

  /**
   * Gives the controller the next bytes of the body, or none at its end.
   * Returns true when the body has ended (with or without bytes given now).
   */
  async #pull(
    connection: Connection,
    framing: Framing,
    controller: ReadableByteStreamController,
  ): Promise<boolean> {
    if (framing.kind === "chunked" && framing.remaining === 0) {
      if (await this.#nextChunk(connection, framing, await connection.line())) return true;
    }
    const max = framing.kind === "length" || framing.kind === "chunked"
      ? framing.remaining
      : Number.MAX_SAFE_INTEGER;
    const n = await this.#readBody(connection, max, controller);
    if (n === 0) {
      if (framing.kind === "close") return true;
      throw new HttpProtocolError("the body ended early");
    }
    switch (framing.kind) {
      case "length":
        framing.remaining -= n;
        return framing.remaining === 0;
      case "chunked": {
        framing.remaining -= n;
        if (framing.remaining > 0) return false;
        if ((await connection.line()) !== "") {
          throw new HttpProtocolError("a chunk does not end with CRLF");
        }
        // The last chunk is usually in the same packet: end the body now when it is, so
        // that a reader that stops at its last event leaves a connection to reuse.
        const next = connection.bufferedLine();
        return next !== undefined && await this.#nextChunk(connection, framing, next);
      }
      default:
        return false;
    }
  }

  /** Reads a chunk-size line; at the last chunk, its trailers too. True at the end. */
  async #nextChunk(
    connection: Connection,
    framing: { remaining: number },
    line: string,
  ): Promise<boolean> {
    const size = line.split(";", 1)[0]!.trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(size)) throw new HttpProtocolError("a bad chunk size");
    framing.remaining = parseInt(size, 16);
    if (framing.remaining > 0) return false;
    // The trailers end with an empty line.
    while ((await connection.line()) !== "");
    return true;
  }

  /**
   * Gives at most `max` bytes of the body to the controller: the buffered
   * ones first, else one read, into the reader's own buffer when it has one.
   * Returns how many (0 at the end of the connection).
   */
  async #readBody(
    connection: Connection,
    max: number,
    controller: ReadableByteStreamController,
  ): Promise<number> {
    const request = controller.byobRequest;
    if (connection.buffered > 0) {
      if (request?.view) {
        const view = new Uint8Array(request.view.buffer, request.view.byteOffset);
        const n = Math.min(max, connection.buffered, request.view.byteLength);
        view.set(connection.buffer.subarray(connection.start, connection.start + n));
        connection.start += n;
        request.respond(n);
        return n;
      }
      return enqueue(controller, connection.take(max));
    }
    if (request?.view) {
      const length = Math.min(max, request.view.byteLength);
      const view = new Uint8Array(request.view.buffer, request.view.byteOffset, length);
      const n = await connection.conn.read(view);
      if (n === null) return 0;
      request.respond(n);
      return n;
    }
    if (max > BUFFER_BYTES) {
      // A large body without a reader's buffer: read into a fresh buffer, no copy.
      const chunk = new Uint8Array(Math.min(max, 256 * 1024));
      const n = await connection.conn.read(chunk);
      if (n === null) return 0;
      controller.enqueue(chunk.subarray(0, n));
      return n;
    }
    if (!await connection.fill()) return 0;
    return enqueue(controller, connection.take(max));
  }

  #release(connection: Connection): void {
    if (this.#closed || connection.closed) return this.#discard(connection);
    connection.idleSince = performance.now();
    let idle = this.#idle.get(connection.origin);
    if (!idle) this.#idle.set(connection.origin, idle = []);
    if (idle.length >= MAX_IDLE) return this.#discard(connection);
    idle.push(connection);
  }

  #discard(connection: Connection): void {
    connection.close();
    this.#open.delete(connection);
  }
}

/** How the HTTP link sends one POST and reads its answer. */
export interface PostTransport {
  post(url: URL, init: PostInit): Promise<Response>;
  /** Ends every connection of the transport. */
  close(): void;
}

/**
 * The transport of fetch, for an upstream behind a proxy: fetch applies
 * HTTPS_PROXY, HTTP_PROXY and NO_PROXY. `client` carries the CA
 * certificates. Redirects are left to the link.
 */
export function fetchTransport(client?: Deno.HttpClient): PostTransport {
  return {
    post: (url, { headers, body, signal }) =>
      fetch(url, {
        method: "POST",
        headers,
        body,
        signal,
        redirect: "manual",
        ...(client && { client }),
      }),
    close: () => {
      try {
        client?.close();
      } catch {
        // already closed
      }
    },
  };
}
