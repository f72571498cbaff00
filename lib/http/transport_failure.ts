/**
 * What the transport saw when a request failed: a fetch error of Deno's
 * HTTP client read as one {@linkcode TransportSight}. The send policy
 * (`send_once.ts`) reads from it whether the server provably did not process
 * the request, and the failure line of the Output channel says it in words.
 *
 * The texts come from the layers under fetch: hyper-util's connector
 * (`client error (Connect)`), the h2 crate's `Display` of an error (a
 * stream above the last-stream-id of a GOAWAY is reset with the remote
 * GOAWAY's error, `connection error received: <reason>`; RST_STREAM is
 * `stream error received: <reason>`; a connection that closes under a
 * stream is a broken pipe), hyper's `connection closed before message
 * completed` (HTTP/1.1), its `error reading a body from connection` (the
 * body of a response cut after its head) and the OS's `Connection reset by
 * peer`.
 *
 * A fetch error's message names the URL (`error sending request for url
 * (...)`): only a {@linkcode TransportSight}'s fixed words leave this
 * module, never the text of an error.
 *
 * @module
 */

/** The kinds of transport failure, from the proof that nothing was sent to a plain fault. */
export type SightKind =
  /** The connection, or its TLS handshake, failed: no byte of the request left. */
  | "connect"
  /** The proxy refused the tunnel (CONNECT): no byte left, and it refuses again. */
  | "proxy_refused"
  /** HTTP/2: the stream was above the last-stream-id of the server's GOAWAY: not processed. */
  | "goaway"
  /** HTTP/2: the server refused the stream (REFUSED_STREAM): not processed. */
  | "refused_stream"
  /** HTTP/2: the server reset the stream (RST_STREAM with another code). */
  | "stream_reset"
  /** HTTP/1.1: the connection closed before the response (hyper's incomplete message). */
  | "incomplete"
  /** The connection closed under the stream (HTTP/2), or without TLS close_notify. */
  | "closed"
  /** The connection was reset (TCP RST). */
  | "reset"
  /**
   * The body of a response failed after its head (hyper's `error reading a
   * body from connection`, whose cause Deno drops: a close or a reset).
   */
  | "body"
  /** Any other failure of the transport. */
  | "other";

/** What the transport saw: its kind, the HTTP/2 error code when there is one, and its words. */
export interface TransportSight {
  readonly kind: SightKind;
  /** The HTTP/2 error code of a GOAWAY or an RST_STREAM (`NO_ERROR`, `INTERNAL_ERROR`...). */
  readonly code?: string;
  /** One short phrase for the log line: no URL, no header, no text of the error. */
  readonly words: string;
}

/**
 * What the transport saw of a stream (an SSE body) that ended, without a
 * failure, before the response message of its request.
 */
export const STREAM_ENDED = "the stream ended before its response";

/** The HTTP/2 error codes (RFC 9113 §7) by the description that the h2 crate prints. */
const H2_CODES: Readonly<Record<string, string>> = {
  "not a result of an error": "NO_ERROR",
  "unspecific protocol error detected": "PROTOCOL_ERROR",
  "unexpected internal error encountered": "INTERNAL_ERROR",
  "flow-control protocol violated": "FLOW_CONTROL_ERROR",
  "settings ACK not received in timely manner": "SETTINGS_TIMEOUT",
  "received frame when stream half-closed": "STREAM_CLOSED",
  "frame with invalid size": "FRAME_SIZE_ERROR",
  "refused stream before processing any application logic": "REFUSED_STREAM",
  "stream no longer needed": "CANCEL",
  "unable to maintain the header compression context": "COMPRESSION_ERROR",
  "connection established in response to a CONNECT request was reset or abnormally closed":
    "CONNECT_ERROR",
  "detected excessive load generating behavior": "ENHANCE_YOUR_CALM",
  "security properties do not meet minimum requirements": "INADEQUATE_SECURITY",
  "endpoint requires HTTP/1.1": "HTTP_1_1_REQUIRED",
};

/** The text of an error and of its causes. */
export function causeText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    parts.push(e.message);
    e = e.cause;
  }
  return parts.join(" | ");
}

/** The code of an h2 error whose description follows `prefix` in `text`, or undefined. */
function h2Code(text: string, prefix: string): string | undefined {
  const at = text.indexOf(prefix);
  if (at === -1) return undefined;
  const rest = text.slice(at + prefix.length);
  for (const [description, code] of Object.entries(H2_CODES)) {
    if (rest.startsWith(description)) return code;
  }
  return "an unknown code";
}

/** The words of a connect error: which step failed, without the address. */
function connectWords(text: string): string {
  if (/dns error|failed to lookup address/i.test(text)) {
    return "the connection failed (the host name did not resolve)";
  }
  if (/connection refused/i.test(text)) return "the connection failed (connection refused)";
  if (/timed out/i.test(text)) return "the connection failed (timed out)";
  if (/certificate|tls|handshake|alert/i.test(text)) {
    return "the connection failed (the TLS handshake failed)";
  }
  return "the connection failed before the request was sent";
}

/**
 * What the transport saw in a fetch error (or a failed read of a body).
 *
 * @example
 * ```ts
 * import { transportSight } from "./transport_failure.ts";
 * const error = new TypeError("fetch failed", {
 *   cause: new Error("connection error received: not a result of an error"),
 * });
 * const sight = transportSight(error);
 * if (sight.kind !== "goaway" || sight.code !== "NO_ERROR") throw new Error(sight.words);
 * ```
 */
export function transportSight(error: unknown): TransportSight {
  const text = causeText(error);
  // Deno: any answer to CONNECT but 200 and 407 (the status is not given).
  if (/unsuccessful tunnel/i.test(text)) {
    return { kind: "proxy_refused", words: "the proxy refused the tunnel" };
  }
  if (text.includes("client error (Connect)")) {
    return { kind: "connect", words: connectWords(text) };
  }
  // A GOAWAY of the server (Initiator::Remote): the h2 crate gives its error to each
  // stream above the last-stream-id, and to each request opened after it.
  const goaway = h2Code(text, "connection error received: ");
  if (goaway !== undefined) {
    return {
      kind: "goaway",
      code: goaway,
      words: `GOAWAY ${goaway} (the stream was above the server's last stream id)`,
    };
  }
  const reset = h2Code(text, "stream error received: ");
  if (reset === "REFUSED_STREAM") {
    return {
      kind: "refused_stream",
      code: reset,
      words: "the server refused the stream (REFUSED_STREAM)",
    };
  }
  if (reset !== undefined) {
    return { kind: "stream_reset", code: reset, words: `the server reset the stream (${reset})` };
  }
  if (/connection reset|os error 104|ECONNRESET/i.test(text)) {
    return { kind: "reset", words: "the connection was reset" };
  }
  if (text.includes("connection closed before message completed")) {
    return { kind: "incomplete", words: "the connection closed before the response" };
  }
  if (/broken pipe|close_notify|unexpected eof|connection closed/i.test(text)) {
    return { kind: "closed", words: "the connection closed before the response" };
  }
  if (text.includes("error reading a body from connection")) {
    return { kind: "body", words: "the connection failed during the body of the response" };
  }
  return { kind: "other", words: "the transport failed" };
}

/**
 * True when what the transport saw proves that the server did not process
 * the request: no byte of it left (the connection failed first), the stream
 * was above the last-stream-id of a GOAWAY (RFC 9113 §6.8), or the server
 * refused it with REFUSED_STREAM (RFC 9113 §8.7).
 */
export function provablyUnprocessed(sight: TransportSight): boolean {
  return sight.kind === "connect" || sight.kind === "goaway" || sight.kind === "refused_stream";
}
