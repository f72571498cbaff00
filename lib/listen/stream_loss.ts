/**
 * New streams after a loss (spec: "New streams after a loss"): which end of
 * a listen stream opens a new one after a wait, after the next sign-in, or
 * not at all, and the wait before it. The owner of the streams
 * (`listen_stream.ts`) carries the rows out.
 *
 * @module
 */

import type { UpstreamClient } from "../upstream/client.ts";
import type { UpstreamFailure } from "../upstream/failure.ts";

/**
 * How a stream ended: a new stream after a wait, one after the next sign-in
 * (an HTTP 401 or 403), or none until a change of the subscriptions.
 */
export type StreamEnd = "retry" | "after_sign_in" | "stop";

/**
 * The rows of "New streams after a loss" for a failure of the upstream
 * client: a lost connection, a transport failure or an HTTP status of 408,
 * 429 or 5xx except 501 retries; 401 and 403 wait for the next sign-in; a
 * child that stopped, an error of the server and each other status stop. A
 * stream that the network ended after its 2xx (reset, cut, closed before
 * its result: a proxy's read timeout) is the Closed / TransportFailed row,
 * though its failure names the status for `data.detail`.
 */
export function streamEndOf(failure: UpstreamFailure, session: UpstreamClient): StreamEnd {
  // A sign-in that the stream's own 401 or 403 started and that failed (declined,
  // timed out) is that challenge's row: it carries no status of its own.
  if (failure.kind === "sign_in") return "after_sign_in";
  const status = failure.status;
  const cut = failure.kind === "transport_failed" && status !== undefined && status < 300;
  if (status !== undefined && !cut) {
    if (status === 401 || status === 403) return "after_sign_in";
    if (status === 408 || status === 429 || (status >= 500 && status <= 599 && status !== 501)) {
      return "retry";
    }
    return "stop";
  }
  if (failure.kind === "closed" || failure.kind === "transport_failed") {
    return session.end?.kind === "exited" ? "stop" : "retry";
  }
  return "stop";
}

/**
 * The wait before the next stream after a loss: 0.5 s, doubling up to 30 s.
 * Only a stream that lives for the healthy time after its acknowledgment
 * resets it.
 */
export class Backoff {
  readonly #first: number;
  readonly #max: number;
  #next: number;

  /** `firstMs` is listen_backoff_ms, `maxMs` listen_max_backoff_ms. */
  constructor(firstMs: number, maxMs: number) {
    this.#first = firstMs;
    this.#max = maxMs;
    this.#next = firstMs;
  }

  /** The next wait; each call doubles the one after it. */
  take(): number {
    const wait = this.#next;
    this.#next = Math.min(this.#next * 2, this.#max);
    return wait;
  }

  /** Back to the first wait: a stream lived the healthy time. */
  reset(): void {
    this.#next = this.#first;
  }
}
