/**
 * Waiting for a promise until a signal aborts, without `Promise.race` on a
 * promise that lives as long as the connection: each race adds a reaction to
 * the long-lived promise that stays until it settles (about 300 bytes, so
 * 300 MB for a million waits). Here the abort listener goes away with the wait.
 *
 * @module
 */

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
