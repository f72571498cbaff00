/** The HTTP/1.1 slots of a link (lib/http/http1_slots.ts). */

import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { Http1Slots } from "../../lib/http/http1_slots.ts";

/** Clients that record their close; `Deno.HttpClient` has no other member that the slots use. */
function fakeClients() {
  const made: { id: number; closed: boolean }[] = [];
  const make = () => {
    const record = { id: made.length, closed: false };
    made.push(record);
    return { close: () => record.closed = true, id: record.id } as unknown as Deno.HttpClient;
  };
  const idOf = (client: Deno.HttpClient) => (client as unknown as { id: number }).id;
  return { made, make, idOf };
}

Deno.test("Http1Slots: a slot serves one request at a time; as many slots as requests in flight", () => {
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500);
  const inFlight = Array.from({ length: 4 }, () => slots.take());
  strictEqual(new Set(inFlight.map((s) => s.client)).size, 4);
  strictEqual(made.length, 4);
  for (const slot of inFlight) slot.release();
  // The next four reuse them: no new client, so no new connection.
  const again = Array.from({ length: 4 }, () => slots.take());
  strictEqual(made.length, 4);
  deepStrictEqual(new Set(again.map((s) => s.client)), new Set(inFlight.map((s) => s.client)));
  strictEqual(slots.busy, 4);
});

Deno.test("Http1Slots: the slot used last is taken first (its connection is the likeliest alive)", () => {
  const { make, idOf } = fakeClients();
  const slots = new Http1Slots(make, 1_500);
  const a = slots.take(), b = slots.take();
  a.release();
  b.release();
  strictEqual(idOf(slots.take().client), idOf(b.client));
});

Deno.test("Http1Slots: a release counts once; a slot idle past the pool's idle time is closed", () => {
  let now = 0;
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500, () => now);
  const a = slots.take(), b = slots.take();
  a.release();
  a.release();
  strictEqual(slots.idle, 1);
  now = 1_000;
  b.release();
  now = 2_000; // a has been idle 2 s, b 1 s
  const c = slots.take();
  strictEqual(made[0]!.closed, true);
  strictEqual(made[1]!.closed, false);
  strictEqual(c.client, b.client);
  strictEqual(slots.idle, 0);
});

Deno.test("Http1Slots: close ends every client, busy or idle; no take after it", () => {
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500);
  const busy = slots.take();
  slots.take().release();
  slots.close();
  deepStrictEqual(made.map((m) => m.closed), [true, true]);
  busy.release();
  strictEqual(slots.idle, 0);
  throws(() => slots.take());
});
