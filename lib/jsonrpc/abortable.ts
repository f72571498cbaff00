/**
 * The waits of the product that a signal ends: a promise until a signal
 * aborts ({@linkcode untilAborted}), and a delay until a signal aborts
 * ({@linkcode abortableDelay}). Each removes its abort listener when it
 * settles, so nothing stays behind on a long-lived signal.
 *
 * `untilAborted` does not use `Promise.race` on a promise that lives as long
 * as the connection: each race adds a reaction to the long-lived promise that
 * stays until it settles (about 300 bytes, so 300 MB for a million waits).
 * Here the abort listener goes away with the wait.
 *
 * The tests poll with `waitFor` of `tests/wait.ts`, which has no signal.
 *
 * @module
 */

import { type Clock, REAL_CLOCK } from "../clock.ts";

/**
 * Settles as `promise` does (its value or its error), or with `fallback` as
 * soon as `signal` aborts: a failed read still fails its reader.
 *
 * @example
 * ```ts
 * import { untilAborted } from "./abortable.ts";
 * const stop = new AbortController();
 * const waiting = untilAborted(new Promise<string>(() => {}), stop.signal, "stopped");
 * stop.abort();
 * if ((await waiting) !== "stopped") throw new Error();
 * ```
 */
export function untilAborted<T, F>(
  promise: Promise<T>,
  signal: AbortSignal,
  fallback: F,
): Promise<T | F> {
  if (signal.aborted) return Promise.resolve(fallback);
  return new Promise<T | F>((resolve, reject) => {
    const onAbort = () => resolve(fallback);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Resolves after `ms` of `clock` (the real one by default; tests pass a
 * fake one), or rejects with the signal's reason as soon as it aborts (at
 * once when it already has). The timer and the listener go away with the
 * wait.
 *
 * @example
 * ```ts
 * import { abortableDelay } from "./abortable.ts";
 * await abortableDelay(1, new AbortController().signal);
 * const stop = new AbortController();
 * const waiting = abortableDelay(60_000, stop.signal).catch((reason) => reason);
 * stop.abort("stopped");
 * if ((await waiting) !== "stopped") throw new Error();
 * ```
 */
export function abortableDelay(
  ms: number,
  signal: AbortSignal,
  clock: Clock = REAL_CLOCK,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = clock.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
