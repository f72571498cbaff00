/**
 * The modern path of the embedded bridge (spec M5), in process through
 * serveStdio: what it adds to the SDK's stdio transport: a too-long line is
 * dropped, a request above the in-flight limit gets -32603 at once, and the
 * end of the input ends the listen stream, waits the grace, then cancels.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Embedded, ENVELOPE, modernCall, type Obj } from "./embedded.ts";

Deno.test("embed modern path: a too-long line is dropped, a request above the in-flight limit gets -32603 at once", async () => {
  const e = new Embedded({
    limits: { max_line_bytes: 400, max_in_flight_requests: 2, shutdown_grace_ms: 200 },
  });
  await e.send(modernCall("a", "slow", { ms: 5000 }));
  await e.send(modernCall("b", "slow", { ms: 5000 }));
  await e.raw(`{"jsonrpc":"2.0","id":"long","method":"ping","x":"${"a".repeat(500)}"}\n`);
  await e.send(modernCall("c", "echo", { text: "c" }));
  const [refused] = await e.untilId("c");
  deepStrictEqual(refused!.error, {
    code: -32603,
    message: "The connection has too many requests in flight",
    data: { cause: "too_many_requests" },
  });
  // The reader still reads the cancellation; then there is room again.
  await e.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "a", _meta: ENVELOPE },
  });
  await e.send(modernCall("d", "echo", { text: "d" }));
  const [done] = await e.untilId("d");
  strictEqual((done!.result as Obj).resultType, "complete");
  // "a" was canceled, "b" is canceled at the end of the input: neither gets a response.
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed modern path: the end of the input ends the listen stream, waits the grace, cancels the rest", async () => {
  const e = new Embedded({ limits: { shutdown_grace_ms: 300 } });
  await e.send({
    jsonrpc: "2.0",
    id: "listen",
    method: "subscriptions/listen",
    params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE },
  });
  const ack = (await e.next())!;
  strictEqual(ack.method, "notifications/subscriptions/acknowledged");
  await e.send(modernCall("quick", "slow", { ms: 50 }));
  await e.send(modernCall("long", "slow", { ms: 10_000 }));
  const started = Date.now();
  const rest = await e.end();
  const elapsed = Date.now() - started;
  deepStrictEqual(rest.map((m) => m.id), ["listen", "quick"]);
  deepStrictEqual(rest[0]!.result, {
    resultType: "complete",
    _meta: {
      "io.modelcontextprotocol/subscriptionId": "listen",
      "io.modelcontextprotocol/serverInfo": {
        name: "embedded-example",
        version: "1.0.0",
        title: "Embedded example",
      },
    },
  });
  ok(elapsed >= 250 && elapsed < 3000, `the end took ${elapsed} ms`);
  // The slow handler's timer is cleared by its cancel: the test's sanitizer finds no timer.
});
