/**
 * Sends one HTTP request at most once: the one place that decides whether a
 * request of the product (the link's POSTs, the 2025-11-25 transport's, every
 * request of the sign-in) may go out again. Every path sends through
 * `linkFetch` of `post_transport.ts`, which sends through
 * {@linkcode sendOnce}.
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
 * its body is `ReqBody::Full` (a string, bytes, URLSearchParams: what
 * `op_fetch` gets as bytes) or `ReqBody::Empty`. A body that is a
 * `ReadableStream` is `ReqBody::Streaming`, which `clone_request` cannot
 * copy (it returns `None`): such a request is never sent again by fetch.
 * So every request goes with a body that fetch streams (a Blob of its
 * bytes, made for that one attempt: see `oneShot`), but a GET, HEAD,
 * OPTIONS or DELETE without a body: those are idempotent (RFC 9110
 * §9.2.2), and fetch may repeat them.
 *
 * hyper-util's client (`client/legacy/client.rs`, `send_request`) still
 * sends a request again when its connection closed before the request was
 * handed to it (hyper gives the request back unsent, on a reused
 * connection): no byte of it was written, whatever its body.
 *
 * **What the product sends again itself**, once: a request whose failure
 * proves that no byte of it left. That is an error of hyper-util's
 * connector (`client error (Connect)` in the error's causes: the TCP
 * connection, the proxy's tunnel or the TLS handshake failed, so the
 * request was never written), or a stream that the server refused with
 * REFUSED_STREAM (RFC 9113 §8.7: the server did not process it). Every
 * other failure (a reset, a connection closed, a stall cut by the time
 * limit) is thrown to the caller, which fails the request once with its
 * cause: a request whose bytes may have reached the server is never
 * resent.
 *
 * @module
 */

/**
 * Methods that fetch may repeat when they have no body (RFC 9110 §9.2.2:
 * idempotent): the GET stream and the metadata of the sign-in, the DELETE
 * that ends a 2025-11-25 session (a second one gets a 404).
 */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "DELETE"]);

/** The text of an error and of its causes. */
export function causeText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    parts.push(e.message);
    e = e.cause;
  }
  return parts.join(" | ");
}

/**
 * True when the failure of a fetch proves that no byte of the request was
 * written: hyper-util's connector failed (`client error (Connect)`), or the
 * server refused the HTTP/2 stream before any processing (REFUSED_STREAM,
 * received from the server).
 */
export function neverSent(error: unknown): boolean {
  const text = causeText(error);
  return text.includes("client error (Connect)") ||
    /stream error received: refused stream before processing any application logic/.test(text);
}

/** A body as bytes, with the Content-Type that fetch would give it (URLSearchParams, a string). */
interface BodyBytes {
  readonly bytes: Uint8Array;
  readonly type: string | null;
}

/** The bytes of a body of `fetch`, or undefined for a stream (it cannot be sent again). */
async function bodyBytes(body: BodyInit | null): Promise<BodyBytes | undefined> {
  if (body instanceof ReadableStream) return undefined;
  if (body === null) return { bytes: new Uint8Array(), type: null };
  const response = new Response(body);
  const type = response.headers.get("content-type");
  return { bytes: new Uint8Array(await response.arrayBuffer()), type };
}

/**
 * The body of one attempt: a Blob, which fetch sends as a stream of a known
 * length (`extractBody` of `ext/fetch/22_body.js` makes a Blob's body its
 * `stream()` with `length = size`; `mainFetch` of `26_fetch.js` gives a
 * stream to `op_fetch` as a resource, `ReqBody::Streaming` with that size:
 * a `Content-Length`, no chunked encoding). `clone_request` cannot copy it.
 */
function oneShot(bytes: Uint8Array): Blob {
  return new Blob([bytes as Uint8Array<ArrayBuffer>]);
}

/** Options of {@linkcode sendOnce}. */
export interface SendOnceOptions {
  /**
   * Another reason to send again after `error` (the link's switch from
   * HTTP/2 to HTTP/1.1 for a server that refuses HTTP/2, before any byte of
   * the request was read as one); it does not count as the one resend.
   */
  readonly fallback?: (error: unknown) => boolean;
  /** A debug line (it names no URL). */
  readonly debug?: (message: string) => void;
}

/**
 * Sends `init` with `attempt` (a fetch with the client of the link) so that
 * fetch cannot send it twice, and once more only when the failure proves that
 * no byte of it left (see the module).
 *
 * @example
 * ```ts
 * import { sendOnce } from "./send_once.ts";
 * const send = (init: RequestInit) => Promise.resolve(new Response(init.body));
 * const response = await sendOnce({ method: "POST", body: "{}" }, send);
 * console.assert(await response.text() === "{}");
 * ```
 */
export async function sendOnce(
  init: RequestInit,
  attempt: (init: RequestInit) => Promise<Response>,
  options: SendOnceOptions = {},
): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  const body = init.body ?? null;
  const bytes = IDEMPOTENT.has(method) && body === null ? undefined : await bodyBytes(body);
  const make = (): RequestInit => {
    if (bytes === undefined) return init;
    const headers = new Headers(init.headers);
    if (bytes.type !== null && !headers.has("content-type")) {
      headers.set("content-type", bytes.type);
    }
    return { ...init, headers, body: oneShot(bytes.bytes) };
  };
  let resent = false;
  for (;;) {
    try {
      return await attempt(make());
    } catch (error) {
      // A stream of the caller's own was read by the failed attempt: it cannot go again.
      if (body instanceof ReadableStream || init.signal?.aborted) throw error;
      if (options.fallback?.(error)) continue;
      // A proxy that refuses the tunnel (Deno: "unsuccessful tunnel") refuses it again: no resend.
      if (resent || !neverSent(error) || causeText(error).includes("unsuccessful tunnel")) {
        throw error;
      }
      resent = true;
      options.debug?.("no byte of a request left (the connection failed first); sending it once");
    }
  }
}
