import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { bodyStopsWith } from "../../lib/http/signal_body.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("bodyStopsWith: an abort ends a read that waits; status and headers stay", async () => {
  const stop = new AbortController();
  const silent = new ReadableStream<Uint8Array>({ start() {} });
  const response = bodyStopsWith(
    new Response(silent, { status: 202, headers: { "x-kept": "yes" } }),
    stop.signal,
  );
  strictEqual(response.status, 202);
  strictEqual(response.headers.get("x-kept"), "yes");
  const read = response.body!.getReader().read().then(() => "read", () => "stopped");
  stop.abort();
  strictEqual(await read, "stopped");
});

Deno.test("bodyStopsWith: no signal, no body or a status without a body: the response itself", () => {
  const plain = new Response("x");
  strictEqual(bodyStopsWith(plain, undefined), plain);
  const empty = new Response(null, { status: 204 });
  strictEqual(bodyStopsWith(empty, new AbortController().signal), empty);
});

/** A signal that counts its `abort` listeners (added less removed). */
function countedSignal(): { stop: AbortController; listeners: () => number } {
  const stop = new AbortController();
  let count = 0;
  const signal = stop.signal;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
    if (args[0] === "abort") count++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<AbortSignal["removeEventListener"]>) => {
    if (args[0] === "abort") count--;
    remove(...args);
  };
  return { stop, listeners: () => count };
}

/** A body that gives `chunks`, then ends (or fails with `error`); records its cancel. */
function source(chunks: string[], error?: Error) {
  const enc = new TextEncoder();
  const seen: { cancelled?: unknown } = {};
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next !== undefined) controller.enqueue(enc.encode(next));
      else if (error) controller.error(error);
      else controller.close();
    },
    cancel(reason) {
      seen.cancelled = reason ?? "cancelled";
    },
  });
  return { body, seen };
}

Deno.test("bodyStopsWith: the chunks pass through in order, and the body ends", async () => {
  const { stop, listeners } = countedSignal();
  const { body } = source(["a", "bc", "", "d"]);
  const response = bodyStopsWith(new Response(body), stop.signal);
  strictEqual(listeners(), 1);
  strictEqual(await response.text(), "abcd");
  strictEqual(listeners(), 0, "the abort listener stays after the end of the body");
  stop.abort(); // no effect after the end
});

Deno.test("bodyStopsWith: an abort in the middle ends the read with the signal's reason and cancels the fetch's body", async () => {
  const { stop, listeners } = countedSignal();
  let cancelled: unknown;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array([1]));
    },
    cancel(reason) {
      cancelled = reason;
    },
  });
  const reader = bodyStopsWith(new Response(body), stop.signal).body!.getReader();
  deepStrictEqual((await reader.read()).value, new Uint8Array([1]));
  const next = reader.read().then(() => undefined, (error: unknown) => error);
  const reason = new Error("closed");
  stop.abort(reason);
  strictEqual(await next, reason);
  strictEqual(cancelled, reason, "the body under the response was not cancelled");
  strictEqual(listeners(), 0);
});

Deno.test("bodyStopsWith: a signal that already aborted: the body fails at once and is cancelled", async () => {
  const { stop, listeners } = countedSignal();
  stop.abort(new Error("gone"));
  const { body, seen } = source(["a"]);
  const response = bodyStopsWith(new Response(body), stop.signal);
  const error = await response.text().then(() => undefined, (e: unknown) => e);
  strictEqual((error as Error | undefined)?.message, "gone");
  ok(seen.cancelled, "the body was not cancelled");
  strictEqual(listeners(), 0);
});

Deno.test("bodyStopsWith: a body that fails gives its own error; a cancel by the reader cancels the body", async () => {
  const { stop, listeners } = countedSignal();
  const reset = new Error("reset");
  const failing = source(["a"], reset);
  const error = await bodyStopsWith(new Response(failing.body), stop.signal).text()
    .then(() => undefined, (e: unknown) => e);
  strictEqual(error, reset);
  strictEqual(listeners(), 0, "the abort listener stays after a failed body");

  const open = source(["a", "b", "c"]);
  const reader = bodyStopsWith(new Response(open.body), stop.signal).body!.getReader();
  await reader.read();
  await reader.cancel("enough");
  strictEqual(open.seen.cancelled, "enough");
  strictEqual(listeners(), 0, "the abort listener stays after a cancel");
  ok(!stop.signal.aborted);
});

Deno.test("bodyStopsWith: a long-lived signal keeps no listener per response once the bodies end", async () => {
  const { stop, listeners } = countedSignal();
  const responses = Array.from(
    { length: 200 },
    (_, i) => bodyStopsWith(new Response(source([`${i}`, "."]).body), stop.signal),
  );
  strictEqual(listeners(), 200);
  const texts = await Promise.all(responses.map((r) => r.text()));
  strictEqual(texts[7], "7.");
  strictEqual(listeners(), 0);
});

Deno.test("the links' fetch: after a garbage collection the body still flows, and an abort still ends a body that the server keeps open", async () => {
  // Deno 2.9.6's fetch alone prints "stuck" here (lib/http/signal_body.ts).
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-net=127.0.0.1",
      "--v8-flags=--expose-gc",
      `${ROOT}tests/fixtures/abort_after_gc.ts`,
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  strictEqual(text, "chunk\nstopped", new TextDecoder().decode(out.stderr));
});

Deno.test("bodyStopsWith: onEnd is told once when the body ends, fails, is cancelled or stopped; at once without a body", async () => {
  const bodyOf = (chunks: string[], fail?: Error) =>
    new ReadableStream<Uint8Array>({
      pull(c) {
        const next = chunks.shift();
        if (next !== undefined) c.enqueue(new TextEncoder().encode(next));
        else if (fail) c.error(fail);
        else c.close();
      },
    });
  const counted = () => {
    const calls = { n: 0 };
    return { calls, onEnd: () => void calls.n++ };
  };
  // Read to its end, without a signal.
  const read = counted();
  strictEqual(await bodyStopsWith(new Response(bodyOf(["a", "b"])), null, read.onEnd).text(), "ab");
  strictEqual(read.calls.n, 1);
  // A body that fails.
  const failed = counted();
  await rejects(
    bodyStopsWith(new Response(bodyOf(["a"], new Error("cut"))), null, failed.onEnd).text(),
  );
  strictEqual(failed.calls.n, 1);
  // Cancelled by its reader, before its end: told at once.
  const cancelled = counted();
  const open = bodyStopsWith(new Response(bodyOf(["a", "b", "c"])), null, cancelled.onEnd);
  strictEqual(cancelled.calls.n, 0);
  await open.body!.cancel();
  strictEqual(cancelled.calls.n, 1);
  // Stopped by the signal.
  const stopped = counted();
  const stop = new AbortController();
  const silent = new ReadableStream<Uint8Array>({ start() {} });
  const waiting = bodyStopsWith(new Response(silent), stop.signal, stopped.onEnd);
  const reading = waiting.text().catch(() => "stopped");
  stop.abort();
  strictEqual(await reading, "stopped");
  strictEqual(stopped.calls.n, 1);
  // No body (a 204): told at once.
  const none = counted();
  bodyStopsWith(new Response(null, { status: 204 }), stop.signal, none.onEnd);
  strictEqual(none.calls.n, 1);
});
