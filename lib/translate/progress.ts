/**
 * The progress relay of one request: the client's token, the upstream's
 * progress, and at most a number of notifications per second.
 *
 * @module
 */

import type { Json, JsonObject, Notification } from "../jsonrpc/message.ts";
import type { UpstreamProgress } from "../upstream/client.ts";

/**
 * Relays the progress of every round of one request to the client, keyed by
 * the request and never by the token: the Copilot harness sends the token 0
 * in each request. A sliding window of one second drops the notifications
 * above the limit. {@linkcode stop} ends the relay before the response or at
 * a cancellation, so no progress comes after either.
 *
 * @example
 * ```ts
 * import { ProgressRelay } from "./progress.ts";
 * import type { Notification } from "../jsonrpc/message.ts";
 * const sent: Notification[] = [];
 * let now = 0;
 * // At most 2 notifications per second, with the client's token 0.
 * const relay = new ProgressRelay(0, 2, (message) => sent.push(message), () => now);
 * const step = { total: 10, message: undefined };
 * relay.relay({ progress: 1, ...step });
 * relay.relay({ progress: 2, ...step });
 * relay.relay({ progress: 3, ...step }); // dropped: the window of one second is full
 * now = 1_000;
 * relay.relay({ progress: 4, ...step });
 * relay.stop();
 * relay.relay({ progress: 5, ...step }); // nothing after stop
 * const progress = sent.map((m) => (m.params as { progress: number }).progress);
 * if (progress.join() !== "1,2,4") throw new Error();
 * ```
 */
export class ProgressRelay {
  readonly #token: Json;
  readonly #send: (message: Notification) => void;
  readonly #now: () => number;
  /** The times of the last `limit` notifications, as a ring. */
  readonly #times: number[];
  #next = 0;
  #stopped = false;

  constructor(
    token: Json,
    limitPerSecond: number,
    send: (message: Notification) => void,
    now = Date.now,
  ) {
    this.#token = token;
    this.#send = send;
    this.#now = now;
    this.#times = new Array<number>(limitPerSecond).fill(-Infinity);
  }

  /** Sends one progress notification, unless the relay stopped or the window is full. */
  relay(progress: UpstreamProgress): void {
    if (this.#stopped || typeof progress.progress !== "number" || this.#times.length === 0) return;
    const now = this.#now();
    if (now - this.#times[this.#next]! < 1000) return;
    this.#times[this.#next] = now;
    this.#next = (this.#next + 1) % this.#times.length;
    const params: JsonObject = { progressToken: this.#token, progress: progress.progress };
    if (typeof progress.total === "number") params.total = progress.total;
    if (typeof progress.message === "string") params.message = progress.message;
    this.#send({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

  /** No progress after this call. */
  stop(): void {
    this.#stopped = true;
  }
}
