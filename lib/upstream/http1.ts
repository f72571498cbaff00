/**
 * A small HTTP/1.1 client for the POSTs of the HTTP link, when no proxy
 * applies (with a proxy variable the link uses fetch, which reads the proxy
 * variables). Keep-alive connections are pooled per origin; each carries one
 * exchange at a time. The wire (the connection's buffer, the head, the
 * framing of a body) is in `http1_wire.ts`.
 *
 * Why not fetch for every POST: on loopback, a small POST through Deno's
 * fetch costs the process 290-550 µs of CPU; a POST written and read by
 * hand, about 100-200 µs. On a machine whose cores the bridge shares with
 * the client and the server, that CPU is latency. So the answer is not a
 * `Response` (with its `Headers` and a stream per body, most of fetch's JS
 * cost) but an `Http1Response` (`http1_response.ts`).
 *
 * What it does not do: HTTP/2, compression (the link asks for identity),
 * proxies, redirects (the link follows those), request bodies other than
 * one buffer.
 *
 * @module
 */

import { untilAborted } from "../jsonrpc/abortable.ts";
import {
  closeQuietly,
  Connection,
  type Head,
  headEnd,
  HttpProtocolError,
  latin1Text,
  MAX_HEAD,
  parseHead,
} from "./http1_wire.ts";
import { Http1Response } from "./http1_response.ts";
import type { PostInit, PostResponse, PostTransport } from "./post_transport.ts";

export { HttpProtocolError } from "./http1_wire.ts";

/** The options of {@linkcode Http1Client}. */
export interface Http1Options {
  /** PEM certificates trusted besides the default roots (https). */
  readonly caCerts?: readonly string[];
  /** An idle connection older than this is closed instead of reused. */
  readonly idleMs?: number;
}

/**
 * Below 5 s, the keep-alive timeout of Node.js servers, so that a pooled
 * connection is rarely one that the server is closing.
 */
const DEFAULT_IDLE_MS = 4000;
/** Idle connections kept per origin. */
const MAX_IDLE = 32;
/** Header fields that this client writes itself. */
const OWN_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding"]);
const enc = new TextEncoder();
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** The bytes of a text whose characters are all below 256 (a ByteString: HTTP heads). */
function latin1(text: string): Uint8Array {
  if (ASCII.test(text)) return enc.encode(text);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/**
 * A pool of HTTP/1.1 connections and the POSTs over them.
 *
 * @example
 * ```ts ignore
 * import { Http1Client } from "./http1.ts";
 * const client = new Http1Client();
 * const response = await client.post(new URL("http://127.0.0.1:8080/mcp"), {
 *   headers: [["content-type", "application/json"]],
 *   body: "{}",
 *   signal: new AbortController().signal,
 * });
 * console.log(response.status, new TextDecoder().decode(await response.arrayBuffer()));
 * client.close();
 * ```
 */
export class Http1Client implements PostTransport {
  readonly #caCerts: string[] | undefined;
  readonly #idleMs: number;
  readonly #idle = new Map<string, Connection[]>();
  readonly #open = new Set<Connection>();
  #closed = false;
  readonly #releaser = (connection: Connection, reusable: boolean) =>
    this.release(connection, reusable);

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
   * read. A reused connection that ends before the first byte of the
   * response (the server closed it while idle) is replaced once by a new
   * one. The signal closes the connection.
   */
  async post(url: URL, init: PostInit): Promise<PostResponse> {
    const { signal } = init;
    signal.throwIfAborted();
    const bytes = this.#requestBytes(url, init);
    for (let attempt = 0;; attempt++) {
      // The second attempt never takes a pooled connection: it could be stale too.
      const pooled = attempt === 0 ? this.#takeIdle(url.origin) : undefined;
      const connection = pooled ?? await this.#connect(url, signal);
      const onAbort = () => this.release(connection, false);
      signal.addEventListener("abort", onAbort, { once: true });
      const received = connection.received;
      try {
        await connection.write(bytes);
        const head = await this.#readHead(connection);
        return new Http1Response(this.#releaser, connection, head, signal, onAbort);
      } catch (error) {
        signal.removeEventListener("abort", onAbort);
        this.release(connection, false);
        if (signal.aborted) throw signal.reason;
        // A pooled connection that failed before a byte of the response (the end, a
        // reset, a TLS connection closed without close_notify) was closed by the server
        // while idle: the request goes once more on a new connection.
        if (!(pooled && connection.received === received)) throw error;
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

  /** A connection is done with its exchange: back to the pool, or closed. */
  release(connection: Connection, reusable: boolean): void {
    if (!reusable || this.#closed || connection.closed) {
      connection.close();
      this.#open.delete(connection);
      return;
    }
    connection.idleSince = performance.now();
    let idle = this.#idle.get(connection.origin);
    if (!idle) this.#idle.set(connection.origin, idle = []);
    if (idle.length >= MAX_IDLE) return this.release(connection, false);
    idle.push(connection);
  }

  #requestBytes(url: URL, init: PostInit): Uint8Array {
    let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    for (const [name, value] of init.headers) {
      if (!OWN_HEADERS.has(name.toLowerCase())) head += `${name}: ${value}\r\n`;
    }
    // Nearly every request is ASCII, head and body: one encode, one buffer
    // (three buffers made and two copied were a tenth of the bridge's time
    // from a client's line to its POST).
    if (ASCII.test(init.body) && ASCII.test(head)) {
      return enc.encode(`${head}content-length: ${init.body.length}\r\n\r\n${init.body}`);
    }
    const body = enc.encode(init.body);
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
        return connection;
      }
      this.release(connection, false);
    }
    return undefined;
  }

  async #connect(url: URL, signal: AbortSignal): Promise<Connection> {
    if (this.#closed) throw new Deno.errors.ConnectionRefused("the client is closed");
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    let conn: Deno.Conn;
    if (url.protocol === "https:") {
      conn = await this.#connectTls(hostname, Number(url.port || 443), signal);
    } else {
      const tcp = await Deno.connect({ hostname, port: Number(url.port || 80), signal });
      tcp.setNoDelay(true);
      conn = tcp;
    }
    const connection = new Connection(conn, url.origin);
    this.#open.add(connection);
    if (signal.aborted || this.#closed) {
      this.release(connection, false);
      signal.throwIfAborted();
      throw new Deno.errors.ConnectionRefused("the client is closed");
    }
    return connection;
  }

  /**
   * A TLS connection after its handshake. The signal stops it at each step
   * (`Deno.connectTls` takes none): the wait ends at once, and a connection
   * that comes later is closed.
   */
  async #connectTls(hostname: string, port: number, signal: AbortSignal): Promise<Deno.TlsConn> {
    const connecting = Deno.connectTls({
      hostname,
      port,
      alpnProtocols: ["http/1.1"],
      ...(this.#caCerts && { caCerts: this.#caCerts }),
    });
    connecting.then((late) => signal.aborted && closeQuietly(late), () => {});
    const tls = await untilAborted(connecting, signal, undefined);
    if (tls === undefined) throw signal.reason;
    try {
      // The information of a handshake is an object: undefined is the abort.
      if (await untilAborted(tls.handshake(), signal, undefined) === undefined) {
        throw signal.reason;
      }
      return tls;
    } catch (error) {
      closeQuietly(tls);
      throw signal.aborted ? signal.reason : error;
    }
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
        throw new HttpProtocolError(empty ? "the connection ended" : "the head ended early");
      }
    }
  }
}
