/**
 * The send policy of every HTTP request of the product (the link's POSTs,
 * the 2025-11-25 transport's, every request of the sign-in): the one place
 * that decides whether a request may go out again. Every path sends through
 * `linkFetch` of `post_transport.ts`, which sends through
 * {@linkcode sendOnce}. A request goes at most twice in all, and never
 * after its signal aborted (a time limit, a cancellation, the close).
 *
 * **The rule of Deno's fetch** (denoland/deno, `ext/fetch/lib.rs`: the
 * policy `FetchRetry`, its `retry`, `clone_request` and
 * `is_error_retryable`): fetch sends a request once more, on a new
 * connection, after a GOAWAY (NO_ERROR) or a REFUSED_STREAM, and, when the
 * failed attempt went on a connection that had already carried a request
 * (every request multiplexed on an HTTP/2 connection after its first, a
 * reused HTTP/1.1 connection), after a connection reset or a connection
 * closed before the response, also when the server had read the request
 * and run it. It does so only when `clone_request` can copy the request:
 * its body is `ReqBody::Full` (a string, bytes: what `op_fetch` gets as
 * bytes) or `ReqBody::Empty`. A body that is a `ReadableStream` (a Blob is
 * one to fetch) is `ReqBody::Streaming`, which `clone_request` cannot copy:
 * such a request is never sent again by fetch.
 *
 * **So the body says who may resend.** Over HTTP/2, a request that is
 * repeatable (it changes nothing at the server: `repeatable.ts`) goes with
 * its bytes, and fetch may send it once more itself (after a GOAWAY above
 * its stream, a REFUSED_STREAM, or a reset of the connection). Every other
 * body, and every body over HTTP/1.1 (where fetch's resend could take
 * another connection that its server is closing), goes as a stream of known
 * length (a Blob made for that one attempt), which fetch never sends twice.
 * A GET, HEAD, OPTIONS or DELETE without a body is idempotent (RFC 9110
 * §9.2.2), and fetch may repeat it. hyper-util's client still sends a
 * request again when its connection closed before the request was handed to
 * it (a reused connection gives the request back unsent): no byte of it was
 * written.
 *
 * **What the product sends again itself**, once, by what the transport saw
 * (`transport_failure.ts`): a request that the server provably did not
 * process (the connection failed before any byte left; an HTTP/2 stream
 * above the last-stream-id of a GOAWAY; REFUSED_STREAM), and a repeatable
 * request after any failure of the transport, unless fetch may have sent it
 * once more already (its GOAWAY, REFUSED_STREAM, reset and closed-connection
 * cases): the bridge never adds a third send. Every other failure (a reset,
 * a connection closed, a stall cut by the time limit) of a request that may
 * have run is thrown to the caller, which fails the request once with its
 * cause.
 *
 * **After the head of a response** the policy sees nothing: the HTTP link
 * itself sends a repeatable request once more when the network cut the body
 * of its response before the response message (`upstream/http.ts`), unless
 * the policy sent it once more already ({@linkcode SendOnceOptions.onResend}).
 * That send goes `again`: it is the one resend, and its body is a stream.
 *
 * @module
 */

import { provablyUnprocessed, type TransportSight, transportSight } from "./transport_failure.ts";

/**
 * Methods that fetch may repeat when they have no body (RFC 9110 §9.2.2:
 * idempotent): the GET stream and the metadata of the sign-in, the DELETE
 * that ends a 2025-11-25 session (a second one gets a 404).
 */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "DELETE"]);

const encoder = new TextEncoder();

/** A body as bytes, with the Content-Type that fetch would give it (URLSearchParams, a string). */
interface BodyBytes {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly type: string | null;
}

/** The bytes of a body of `fetch`, or undefined for a stream (it cannot be sent again). */
async function bodyBytes(body: BodyInit | null): Promise<BodyBytes | undefined> {
  if (body instanceof ReadableStream) return undefined;
  if (body === null) return { bytes: new Uint8Array(), type: null };
  // The body of every POST of the links: no detour through a Response.
  if (typeof body === "string") {
    return { bytes: encoder.encode(body), type: "text/plain;charset=UTF-8" };
  }
  const response = new Response(body);
  const type = response.headers.get("content-type");
  return { bytes: new Uint8Array(await response.arrayBuffer()), type };
}

/**
 * The body of one attempt of a request that may have run: a Blob, which
 * fetch sends as a stream of a known length (`extractBody` of
 * `ext/fetch/22_body.js` makes a Blob's body its `stream()` with `length =
 * size`; `mainFetch` of `26_fetch.js` gives a stream to `op_fetch` as a
 * resource, `ReqBody::Streaming` with that size: a `Content-Length`, no
 * chunked encoding). `clone_request` cannot copy it.
 */
function oneShot(bytes: Uint8Array<ArrayBuffer>): Blob {
  return new Blob([bytes]);
}

/**
 * True when Deno's fetch may have sent a copy of a request of bytes once
 * more already after this failure (see the module): a GOAWAY NO_ERROR and
 * REFUSED_STREAM always, a reset and a connection closed before the
 * response when the connection had carried a request before.
 */
function fetchMayHaveResent(sight: TransportSight): boolean {
  return (sight.kind === "goaway" && sight.code === "NO_ERROR") ||
    sight.kind === "refused_stream" || sight.kind === "reset" || sight.kind === "incomplete";
}

/**
 * The headers with the Content-Type that fetch gives the body itself: a
 * Blob has none of its own. A list of pairs (the links' POSTs, which carry
 * theirs) is read as it is.
 */
function withContentType(headers: HeadersInit | undefined, type: string): HeadersInit {
  const has = Array.isArray(headers)
    ? headers.some(([name]) => name?.toLowerCase() === "content-type")
    : new Headers(headers).has("content-type");
  if (has) return headers!;
  return [...(Array.isArray(headers) ? headers : new Headers(headers)), ["content-type", type]];
}

/** One attempt of a request, as the policy hands it to the HTTP client (`post_transport.ts`). */
export interface Attempt {
  /**
   * The init of this attempt. `cloneable`: the body may go as bytes, which
   * fetch may send once more itself; only a repeatable request's may (the
   * client says no where fetch's own resend could land on another stale
   * connection: HTTP/1.1).
   */
  init(cloneable: boolean): RequestInit;
  /** The policy's one resend: over HTTP/1.1 it takes a connection of its own. */
  readonly resend: boolean;
}

/** Options of {@linkcode sendOnce}. */
export interface SendOnceOptions {
  /**
   * The request changes nothing at the server (`repeatable.ts`): it goes
   * once more after any failure of the transport, and its body may go as
   * bytes.
   */
  readonly repeatable?: boolean;
  /**
   * Another reason to send again after `error` (the link's switch from
   * HTTP/2 to HTTP/1.1 for a server that refuses HTTP/2, before any byte of
   * the request was read as one); it does not count as the one resend.
   */
  readonly fallback?: (error: unknown) => boolean;
  /**
   * This send is the request's one resend already (the link sends a
   * repeatable request again after its response was cut, `upstream/http.ts`):
   * the policy adds none, the body goes as a stream (fetch sends it once), and
   * over HTTP/1.1 it takes a connection of its own.
   */
  readonly again?: boolean;
  /** Told when the policy sends the request once more (the link then adds no send of its own). */
  readonly onResend?: () => void;
  /** What the request is, for the debug line of a resend (its JSON-RPC method); no URL. */
  readonly label?: string;
  /** A debug line (it names no URL). */
  readonly debug?: (message: string) => void;
}

/**
 * True when the policy sends a request once more after `sight` (see the
 * module): `repeatable` is the request's; `cloned`, the failed attempt's
 * body went as bytes (fetch may have sent it again already).
 */
export function mayResend(sight: TransportSight, repeatable: boolean, cloned: boolean): boolean {
  if (sight.kind === "proxy_refused") return false;
  if (cloned && fetchMayHaveResent(sight)) return false;
  return repeatable || provablyUnprocessed(sight);
}

/**
 * Sends a request with `attempt` (a fetch with a client of the link) by the
 * policy of the module: at most once more, and only by its rule.
 *
 * @example
 * ```ts
 * import { sendOnce } from "./send_once.ts";
 * const send = (attempt: { init(cloneable: boolean): RequestInit }) =>
 *   Promise.resolve(new Response(attempt.init(false).body));
 * const response = await sendOnce({ method: "POST", body: "{}" }, send);
 * console.assert(await response.text() === "{}");
 * ```
 */
export async function sendOnce(
  init: RequestInit,
  attempt: (attempt: Attempt) => Promise<Response>,
  options: SendOnceOptions = {},
): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  const body = init.body ?? null;
  const bytes = IDEMPOTENT.has(method) && body === null ? undefined : await bodyBytes(body);
  const repeatable = options.repeatable === true;
  const headers = bytes?.type ? withContentType(init.headers, bytes.type) : init.headers;
  let resent = options.again === true;
  for (;;) {
    /** The body of this attempt went as bytes. */
    let cloned = false;
    const build = (cloneable: boolean): RequestInit => {
      if (bytes === undefined) return init;
      cloned = cloneable && repeatable && options.again !== true;
      return {
        ...init,
        ...(headers && { headers }),
        body: cloned ? bytes.bytes : oneShot(bytes.bytes),
      };
    };
    try {
      return await attempt({ init: build, resend: resent });
    } catch (error) {
      // A stream of the caller's own was read by the failed attempt: it cannot go again.
      if (body instanceof ReadableStream || init.signal?.aborted) throw error;
      if (options.fallback?.(error)) continue;
      const sight = transportSight(error);
      if (resent || !mayResend(sight, repeatable, cloned)) throw error;
      resent = true;
      options.onResend?.();
      options.debug?.(`${options.label ?? "a request"}: sent once more after ${sight.words}`);
    }
  }
}
