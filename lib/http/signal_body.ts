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
 * **How.** The body is read through a pass-through stream of its own,
 * pulled a chunk at a time from the reader of the fetch's body, and the
 * caller's signal gets an `abort` listener (an event listener: the signal
 * holds it, and with it the reader, strongly). The abort cancels the fetch's
 * body (the connection's stream ends) and errors what the reader of the
 * response reads with the signal's reason. The listener goes away when the
 * body ends, fails or is cancelled, so a signal that lives long (a link's)
 * does not keep one per response. This costs one read per chunk, where a
 * `pipeThrough` of a `TransformStream` with `signal` (which also holds the
 * signal) ran a pipe's loop and two queues per chunk, on every call of the
 * link.
 *
 * **The end of the body.** `onEnd` is told once when the body has ended,
 * failed, been cancelled or been stopped: the HTTP/1.1 client that carried
 * it can take another request (`http1_slots.ts`).
 *
 * @module
 */

/** Statuses whose response has no body (a `Response` with one cannot be made). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `response`, with a body that an abort of `signal` ends and whose end
 * `onEnd` is told (see the module). Without a body, `response` itself (and
 * `onEnd` at once); without a signal and `onEnd`, `response` itself.
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
  const reader = body.getReader();
  /** Set once the body ended, failed, was cancelled or was stopped: the listener is gone. */
  let over = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = () => {
    over = true;
    signal?.removeEventListener("abort", stop);
    onEnd?.();
  };
  const stop = () => {
    if (over || !signal) return;
    finish();
    controller.error(signal.reason);
    reader.cancel(signal.reason).catch(() => {});
  };
  const stopped = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (!over) {
          finish();
          c.error(error);
        }
        return;
      }
      if (over) return; // stopped while the read waited
      if (chunk.done) {
        finish();
        c.close();
      } else c.enqueue(chunk.value);
    },
    cancel(reason) {
      if (over) return;
      finish();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  signal?.addEventListener("abort", stop);
  if (signal?.aborted) stop(); // an abort before: no event comes

  return new Response(stopped, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
