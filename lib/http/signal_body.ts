/**
 * A response whose body stops when the signal of its request aborts, also
 * after a garbage collection.
 *
 * **Why.** The Fetch standard ends the body of a response when the signal
 * of its request aborts, and the links rely on it: the close of a link, a
 * cancelled request, a time limit and a replaced listen stream all abort a
 * fetch whose body is still being read. Deno 2.9.6 ties the body to the
 * signal through the `Request` that `fetch` makes inside: its signal is a
 * dependent of the caller's (`ext/web/03_abort_signal.js`), which the
 * caller's signal holds only by a `WeakRef` unless the dependent has an
 * `abort` event listener, and `fetch` registers its own step with the
 * internal `[add]`, which is no listener. Once `fetch` has resolved nothing
 * else holds that `Request`: after a garbage collection the abort no longer
 * reaches the body, and a read of it waits for the server for ever (a GET
 * stream that the server keeps open kept `doctor` from exiting).
 *
 * **How.** The body goes through a pipe that the caller's own signal stops
 * (`pipeThrough` with `signal`): the pipe holds the signal, so the abort
 * always cancels the body (the connection's stream ends) and errors what the
 * reader of the response reads.
 *
 * @module
 */

/** Statuses whose response has no body (a `Response` with one cannot be made). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `response`, with a body that an abort of `signal` ends (see the module).
 * Without a signal or a body, `response` itself.
 *
 * @example
 * ```ts
 * import { bodyStopsWith } from "./signal_body.ts";
 * const stop = new AbortController();
 * const silent = new ReadableStream<Uint8Array>({ start() {} });
 * const response = bodyStopsWith(new Response(silent), stop.signal);
 * const read = response.body!.getReader().read().then(() => "read", () => "stopped");
 * stop.abort();
 * if (await read !== "stopped") throw new Error("the abort did not end the body");
 * ```
 */
export function bodyStopsWith(
  response: Response,
  signal: AbortSignal | null | undefined,
  onEnd?: () => void,
): Response {
  const body = response.body;
  if (body === null || NULL_BODY.has(response.status) || response.status < 200) {
    onEnd?.();
    return response;
  }
  if (!signal && !onEnd) return response;
  const pass = new TransformStream<Uint8Array, Uint8Array>();
  // The pipe rejects when the signal aborts; the reader of the body gets that error.
  const piped = body.pipeTo(pass.writable, signal ? { signal } : {});
  piped.catch(() => {}).finally(() => onEnd?.());
  return new Response(pass.readable, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
