/**
 * A response far over --max-response-bytes fails its request at once, and
 * the bridge does not read the rest of the body into memory: its peak RSS
 * stays near the limit, not near the size of the body.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { serveMcp } from "../fixtures/http_raw.ts";
import { BridgeProcess, peakRssMb } from "./helpers.ts";

const MIB = 1024 * 1024;

/** A body of `total` bytes made 1 MiB at a time, as the socket takes them. */
function hugeBody(
  total: number,
  prefix: string,
  sent: { bytes: number },
): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(MIB).fill(0x78); // "x"
  let first = true;
  return new ReadableStream({
    pull(controller) {
      if (first) {
        first = false;
        const head = new TextEncoder().encode(prefix);
        sent.bytes += head.length;
        controller.enqueue(head);
        return;
      }
      if (sent.bytes >= total) return controller.close();
      sent.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

Deno.test({
  name:
    "http: a 512 MiB response over an 8 MiB limit fails at once; the peak RSS stays near the limit",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const total = 512 * MIB;
    const sent = { json: { bytes: 0 }, sse: { bytes: 0 } };
    await using upstream = serveMcp((m) => {
      if (m.method !== "tools/call") return undefined;
      const mode = (m.params?.arguments as { mode: string }).mode;
      const id = JSON.stringify(m.id);
      if (mode === "json") {
        const body = hugeBody(total, `{"jsonrpc":"2.0","id":${id},"result":{"pad":"`, sent.json);
        return new Response(body, { headers: { "content-type": "application/json" } });
      }
      const body = hugeBody(
        total,
        `event: message\ndata: {"jsonrpc":"2.0","id":${id},"pad":"`,
        sent.sse,
      );
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    await using bridge = new BridgeProcess(["--max-response-bytes", String(8 * MIB), upstream.url]);
    await bridge.initialize();
    const base = peakRssMb(bridge.child.pid) * MIB;
    for (const mode of ["json", "sse"] as const) {
      await bridge.request(mode, "tools/call", { name: "big", arguments: { mode } });
      const response = await bridge.response(mode, 30_000);
      deepStrictEqual((response.error as { data: unknown }).data, {
        cause: "invalid_response",
        detail: "HTTP status 200",
      });
      ok(sent[mode].bytes < total / 4, `the server sent ${sent[mode].bytes} bytes of ${total}`);
    }
    const peak = peakRssMb(bridge.child.pid) * MIB;
    ok(
      peak - base < 64 * MIB,
      `peak RSS ${Math.round(peak / MIB)} MiB, ${
        Math.round((peak - base) / MIB)
      } MiB over the start`,
    );
    await bridge.exit();
  },
});
