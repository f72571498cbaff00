import { strictEqual } from "node:assert/strict";
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

Deno.test("the links' fetch: an abort after a garbage collection still ends a body that the server keeps open", async () => {
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
  strictEqual(text, "stopped", new TextDecoder().decode(out.stderr));
});
