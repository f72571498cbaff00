/**
 * How the HTTP link sends one POST: Deno's `fetch`, with the HTTP clients
 * (`Deno.HttpClient`) of the link. They carry the CA certificates of
 * `--ca-file` and apply HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
 *
 * - **HTTP/2** for an `https:` URL: one connection carries every request
 *   in flight, and it stays open between calls (no new handshake after the
 *   user's think time). The client speaks only HTTP/2, so that the requests
 *   that start together wait for the one connection instead of opening one
 *   each.
 * - **HTTP/1.1** for an `http:` URL, and for a server whose TLS handshake
 *   refuses HTTP/2 (`NoApplicationProtocol`: no byte of the request was
 *   sent, so the POST goes once over HTTP/1.1), or that chooses no protocol
 *   and answers the HTTP/2 preface as HTTP/1.1 (before any answer over
 *   HTTP/2: the server read no request of ours). Connections are kept alive
 *   and reused, one per request in flight: each request has a client of its
 *   own until its body ends (`http1_slots.ts`), and an idle one is dropped
 *   after the limit `http_pool_idle_ms` (1.5 s): below the keep-alive time of
 *   the servers that close soonest, so that the bridge does not send a
 *   request on a connection at the moment its server closes it (the request
 *   would fail before any byte of a response, as after a crash of a server
 *   that ran it: it is not sent again, where a fresh connection would have
 *   carried it). Every body goes as a stream over HTTP/1.1, and the policy's one
 *   resend takes a connection of its own: fetch's resend, or the pool, could
 *   give it another connection that its server is closing (a reload of
 *   nginx closes every idle one).
 *
 * Whatever the client, a request is sent through `sendOnce`
 * (`send_once.ts`), the send policy: what goes once more, and when.
 *
 * The body of every response stops when the request's signal aborts (the
 * close, a cancellation, a time limit), also after a garbage collection
 * (`signal_body.ts`: Deno's fetch alone may lose that abort).
 *
 * Redirects are not followed by fetch: {@linkcode postWithinOrigin} follows
 * them only within the origin.
 *
 * @module
 */

import { DEFAULT_LIMITS } from "../settings/limits.ts";
import { refusalAware } from "./proxy_refusal.ts";
import { Http1Slots } from "./http1_slots.ts";
import { sendOnce } from "./send_once.ts";
import { bodyStopsWith } from "./signal_body.ts";
import { causeText } from "./transport_failure.ts";

/** What the send policy needs to know of one request (`send_once.ts`). */
export interface SendMeta {
  /** The request changes nothing at the server (`repeatable.ts`). */
  readonly repeatable?: boolean;
  /** Its JSON-RPC method, for a debug line; no URL. */
  readonly label?: string;
  /** The link's one resend of a request whose response was cut (`SendOnceOptions.again`). */
  readonly again?: boolean;
  /** Told when the policy sends the request once more. */
  readonly onResend?: () => void;
}

/** One POST: its header fields (without Host and Content-Length), its body and its signal. */
export interface PostInit extends SendMeta {
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

/** What the HTTP clients of a link are made with. */
export interface FetchTransportOptions {
  /** PEM certificates trusted besides the system roots (`--ca-file`). */
  readonly caCerts?: readonly string[];
  /** A debug line (it names no URL). */
  readonly debug?: (message: string) => void;
  /**
   * Told the URL of a request that the proxy refused (`proxy_refusal.ts`);
   * with it, such a request rejects with the refusal's failure. The links
   * give it, the sign-in does not.
   */
  readonly refused?: (url: URL) => void;
  /** How long an idle HTTP/1.1 connection stays (the limit `http_pool_idle_ms`). */
  readonly poolIdleMs?: number;
}

/** True for the failure of a TLS handshake whose server refused HTTP/2 (ALPN). */
function refusedHttp2(error: unknown): boolean {
  return causeText(error).includes("NoApplicationProtocol");
}

/**
 * True for an HTTP/2 connection error: the server chose no protocol in the
 * handshake (it ignores ALPN, as Python's ssl does by default) and answered
 * the HTTP/2 preface as HTTP/1.1 (`PRI * HTTP/2.0` gets a 505 or a 400),
 * which hyper reads as a frame that is not valid. Such a server parsed no
 * request of ours.
 */
function notHttp2Server(error: unknown): boolean {
  return /frame with invalid size|connection error detected|invalid HTTP\/2 preface/i.test(
    causeText(error),
  );
}

/** A fetch of the link's HTTP clients, and the close of their connections. */
export interface LinkFetch {
  /** fetch with the client that the URL and the server call for (see the module). */
  fetch(input: URL | string, init: RequestInit, meta?: SendMeta): Promise<Response>;
  /** Ends every connection of the clients. */
  close(): void;
}

/**
 * The fetch of a link, for every method (the 2025-11-25 transport of
 * `--protocol auto` also sends GET and DELETE): HTTP/2 for an `https:` URL,
 * HTTP/1.1 with connections kept alive for `http:` and for a server that
 * refuses HTTP/2.
 *
 * @example
 * ```ts
 * import { linkFetch } from "./post_transport.ts";
 * const link = linkFetch();
 * link.close();
 * ```
 */
export function linkFetch(options: FetchTransportOptions = {}): LinkFetch {
  const caCerts = options.caCerts && { caCerts: [...options.caCerts] };
  let http2: Deno.HttpClient | undefined;
  let fresh: Deno.HttpClient | undefined;
  /** The server refused HTTP/2: every later request goes over HTTP/1.1. */
  let http1Only = false;
  /** An HTTP/2 request of this link had an answer: the server speaks HTTP/2. */
  let http2Spoken = false;
  let closed = false;
  const poolIdleTimeout = options.poolIdleMs ?? DEFAULT_LIMITS.http_pool_idle_ms;
  // Over HTTP/1.1 each request in flight has a client of its own with at most one connection
  // (http1_slots.ts): a request never opens a connection that another one's return makes useless.
  const http1 = new Http1Slots(
    () =>
      Deno.createHttpClient({
        ...caCerts,
        http1: true,
        http2: false,
        poolIdleTimeout,
        poolMaxIdlePerHost: 1,
      }),
    poolIdleTimeout,
  );
  /**
   * The client of the policy's resend over HTTP/1.1: a connection of its own,
   * never reused. The connection that failed may not be the only one that
   * its server is closing (a reload of nginx closes every idle one).
   */
  const freshClient = () =>
    fresh ??= Deno.createHttpClient({
      ...caCerts,
      http1: true,
      http2: false,
      poolMaxIdlePerHost: 0,
    });
  const send = (url: URL, init: RequestInit, meta: SendMeta): Promise<Response> => {
    /** The attempt in flight goes over HTTP/2. */
    let overHttp2 = false;
    return sendOnce(init, async (attempt) => {
      overHttp2 = url.protocol === "https:" && !http1Only;
      if (!overHttp2) {
        // Over HTTP/1.1 a body never goes as bytes: fetch's own resend could take another
        // connection that its server is closing, and the policy's could not follow it.
        if (attempt.resend) {
          const response = await fetch(url, { ...attempt.init(false), client: freshClient() });
          return bodyStopsWith(response, init.signal);
        }
        const slot = http1.take();
        try {
          const response = await fetch(url, { ...attempt.init(false), client: slot.client });
          // The slot serves another request once this body has ended (read, cancelled, stopped).
          return bodyStopsWith(response, init.signal, slot.release);
        } catch (error) {
          slot.release();
          throw error;
        }
      }
      http2 ??= Deno.createHttpClient({ ...caCerts, http1: false, http2: true });
      const response = await fetch(url, { ...attempt.init(true), client: http2 });
      http2Spoken = true;
      // The signal ends the body too, after a garbage collection (signal_body.ts).
      return bodyStopsWith(response, init.signal);
    }, {
      // Before any answer over HTTP/2, a server that does not speak it: no byte of a
      // request of ours was read as one, so it goes once over HTTP/1.1.
      fallback: (error) => {
        if (!overHttp2 || http1Only) return false;
        if (!refusedHttp2(error) && (http2Spoken || !notHttp2Server(error))) return false;
        options.debug?.("the upstream server refused HTTP/2; using HTTP/1.1");
        http1Only = true;
        return true;
      },
      ...(meta.repeatable && { repeatable: true }),
      ...(meta.label !== undefined && { label: meta.label }),
      ...(meta.again && { again: true }),
      ...(meta.onResend && { onResend: meta.onResend }),
      ...(options.debug && { debug: options.debug }),
    });
  };
  const refused = options.refused;
  const sendSaid = refused ? refusalAware(send, refused) : send;
  return {
    fetch: (input, init, meta = {}) =>
      sendSaid(input instanceof URL ? input : new URL(input), init, meta),
    close: () => {
      if (closed) return;
      closed = true;
      http2?.close();
      http1.close();
      fresh?.close();
    },
  };
}

/**
 * The transport of the HTTP link: POSTs through {@linkcode linkFetch} (with
 * the refusals of the proxy said as such when `refused` is given), whose
 * clients {@linkcode PostTransport.close} closes.
 */
export function fetchTransport(options: FetchTransportOptions = {}): PostTransport {
  const link = linkFetch(options);
  return {
    post: (url, init) =>
      link.fetch(url, {
        method: "POST",
        headers: init.headers as [string, string][],
        body: init.body,
        signal: init.signal,
        redirect: "manual",
      }, init),
    close: () => link.close(),
  };
}

/** How many redirects within the origin one POST follows. */
const MAX_REDIRECTS = 3;

/**
 * One POST of the HTTP link to `url` that follows a 307 or 308 to the same
 * origin (as the SDK v2 client does by default), at most
 * {@linkcode MAX_REDIRECTS} times. A redirect to another origin is not
 * followed: it would carry the headers of the user and the token there. Its
 * 3xx fails the request with its status.
 *
 * @example
 * ```ts
 * import { postWithinOrigin, type PostTransport } from "./post_transport.ts";
 * const transport: PostTransport = {
 *   post: () => Promise.resolve(new Response("{}", { status: 200 })),
 *   close: () => {},
 * };
 * const url = new URL("http://127.0.0.1/mcp");
 * const init = { headers: [], body: "{}", signal: new AbortController().signal };
 * const response = await postWithinOrigin(transport, url, init);
 * if (response.status !== 200) throw new Error();
 * ```
 */
export async function postWithinOrigin(
  transport: PostTransport,
  url: URL,
  init: PostInit,
): Promise<Response> {
  let target = url;
  for (let hop = 0;; hop++) {
    const response = await transport.post(target, init);
    if ((response.status !== 307 && response.status !== 308) || hop >= MAX_REDIRECTS) {
      return response;
    }
    let next: URL;
    try {
      next = new URL(response.headers.get("location") ?? "", target);
    } catch {
      return response;
    }
    if (next.origin !== url.origin) return response;
    await response.body?.cancel().catch(() => {});
    target = next;
  }
}
