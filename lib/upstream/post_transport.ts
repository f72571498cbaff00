/**
 * How the HTTP link sends one POST and what it reads of the answer: the
 * bridge's own HTTP/1.1 client (`http1.ts`), or fetch for an upstream
 * behind a proxy.
 *
 * @module
 */

/** One POST: its header fields (without Host and Content-Length), its body and its signal. */
export interface PostInit {
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly signal: AbortSignal;
}

/** What the HTTP link reads of a response: a fetch `Response` has all of it. */
export interface PostResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  /** The body as a byte stream, or null for a response without one. */
  readonly body: ReadableStream<Uint8Array> | null;
  /** The whole body. */
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** How the HTTP link sends one POST and reads its answer. */
export interface PostTransport {
  post(url: URL, init: PostInit): Promise<PostResponse>;
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
        headers: headers as [string, string][],
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
