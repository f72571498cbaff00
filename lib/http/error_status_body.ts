/**
 * The body of a response that is not OK (an error status, a redirect) on
 * the 2025-11-25 link, read within a bound before the v1 SDK's transport
 * reads it whole (`response.text()`): an SSE body is cancelled (it can stay
 * open), any other is read up to {@linkcode ERROR_BODY_BYTES} and the rest
 * is cancelled, as the 2026-07-28 link reads one (`readErrorBody` of
 * `upstream/http_response.ts`). A body that is endless or huge costs no
 * more memory than that, and the request fails at once.
 *
 * @module
 */

import { readBounded, TooLargeError } from "./bounded_body.ts";
import { decodeUpstream } from "../upstream/decode.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { ERROR_BODY_BYTES, errorMessageOf } from "../upstream/http_response.ts";

/**
 * The first bytes of the body of a response that is not OK, the rest of it
 * cancelled: none for an SSE body, one over the bound, or one that the
 * connection cut.
 */
export async function errorBodyHead(response: Response, type: string): Promise<Uint8Array> {
  const body = response.body;
  if (!body) return new Uint8Array(0);
  if (type === "text/event-stream") {
    await body.cancel().catch(() => {});
    return new Uint8Array(0);
  }
  try {
    return await readBounded(body, ERROR_BODY_BYTES);
  } catch (error) {
    // Over the bound (the rest is cancelled), or cut: no message of it.
    if (!(error instanceof TooLargeError)) await body.cancel().catch(() => {});
    return new Uint8Array(0);
  }
}

/** The response that the SDK's transport gets: the same status and headers, the bytes of `head`. */
export function withHead(response: Response, head: Uint8Array): Response {
  // A 304 has no body; an empty one is none.
  const body = head.length === 0 || response.status === 304
    ? null
    : head as Uint8Array<ArrayBuffer>;
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * The failure of a request whose response has the error `status`: the
 * status, after the message of the JSON-RPC error of a JSON body.
 */
export function errorStatusFailure(
  status: number,
  type: string,
  head: Uint8Array,
): UpstreamFailure {
  const message = type === "application/json" && head.length > 0 ? decodeUpstream(head) : undefined;
  const upstreamMessage = errorMessageOf(message);
  return new UpstreamFailure("transport_failed", {
    status,
    ...(upstreamMessage !== undefined && { upstreamMessage }),
  });
}
