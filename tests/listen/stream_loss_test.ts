import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Backoff, streamEndOf } from "../../lib/listen/stream_loss.ts";
import type { UpstreamClient } from "../../lib/upstream/client.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";

Deno.test("backoff: 0.5 s doubling up to 30 s; reset gives 0.5 s again", () => {
  const b = new Backoff(500, 30_000);
  deepStrictEqual(Array.from({ length: 9 }, () => b.take()), [
    500,
    1000,
    2000,
    4000,
    8000,
    16000,
    30000,
    30000,
    30000,
  ]);
  b.reset();
  strictEqual(b.take(), 500);
});

Deno.test("streamEndOf: the rows of New streams after a loss, and a failed sign-in of the stream's own challenge", () => {
  const session = { end: undefined } as unknown as UpstreamClient;
  const exited = { end: { kind: "exited" } } as unknown as UpstreamClient;
  const rows: [UpstreamFailure, UpstreamClient, string][] = [
    [new UpstreamFailure("transport_failed", { status: 503 }), session, "retry"],
    [new UpstreamFailure("transport_failed", { status: 408 }), session, "retry"],
    [new UpstreamFailure("transport_failed", { status: 429 }), session, "retry"],
    [new UpstreamFailure("transport_failed", { status: 501 }), session, "stop"],
    [new UpstreamFailure("transport_failed", { status: 404 }), session, "stop"],
    [new UpstreamFailure("sign_in", { status: 401 }), session, "after_sign_in"],
    [new UpstreamFailure("sign_in", { status: 403 }), session, "after_sign_in"],
    [
      new UpstreamFailure("sign_in", { signIn: { cause: "reauthorization_required" } }),
      session,
      "after_sign_in",
    ],
    [
      new UpstreamFailure("sign_in", { signIn: { cause: "sign_in_timeout" } }),
      session,
      "after_sign_in",
    ],
    [new UpstreamFailure("transport_failed"), session, "retry"],
    // Cut by the network after its 200 (a proxy's read timeout): Closed / TransportFailed.
    [new UpstreamFailure("transport_failed", { status: 200 }), session, "retry"],
    [new UpstreamFailure("invalid_response", { status: 200 }), session, "stop"],
    [new UpstreamFailure("closed"), session, "retry"],
    [new UpstreamFailure("closed"), exited, "stop"],
    [new UpstreamFailure("rpc", { error: { code: -1, message: "x" } }), session, "stop"],
  ];
  for (const [failure, client, row] of rows) {
    strictEqual(streamEndOf(failure, client), row, failure.message);
  }
});
