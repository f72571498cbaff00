/**
 * How the HTTP link sends one POST: Deno's `fetch` with one
 * `Deno.HttpClient` per link. The client carries the CA certificates of
 * `--ca-file`, offers HTTP/2 and HTTP/1.1 (ALPN picks; a server that speaks
 * only HTTP/2 works), pools its connections (one HTTP/2 connection carries
 * every request in flight) and applies HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
 *
 * fetch never sends a request twice: its pool retries a request only when
 * the reused connection failed before any byte of it was written. Redirects
 * are left to the link, which follows them only within the origin.
 *
 * @module
 */

/** One POST: its header fields (without Host and Content-Length), its body and its signal. */
export interface PostInit {
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly signal: AbortSignal;
}

/** How the HTTP link sends one POST and reads its answer. */
export interface PostTransport {
  post(url: URL, init: PostInit): Promise<Response>;
  /** Ends every connection of the transport. */
  close(): void;
}

/** What the HTTP client of a link is made with. */
export interface FetchTransportOptions {
  /** PEM certificates trusted besides the system roots (`--ca-file`). */
  readonly caCerts?: readonly string[];
}

/**
 * The transport of a link: fetch with an HTTP client of its own, which
 * {@linkcode PostTransport.close} closes (and with it every connection).
 *
 * @example
 * ```ts
 * import { fetchTransport } from "./post_transport.ts";
 * const transport = fetchTransport();
 * transport.close();
 * ```
 */
export function fetchTransport(options: FetchTransportOptions = {}): PostTransport {
  const client = Deno.createHttpClient({
    ...(options.caCerts && { caCerts: [...options.caCerts] }),
    http1: true,
    http2: true,
  });
  let closed = false;
  return {
    post: (url, { headers, body, signal }) =>
      fetch(url, {
        method: "POST",
        headers: headers as [string, string][],
        body,
        signal,
        redirect: "manual",
        client,
      }),
    close: () => {
      if (closed) return;
      closed = true;
      client.close();
    },
  };
}
