/** The HTTP/1.1 slots of a link (lib/http/http1_slots.ts). */

import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { Http1Slots } from "../../lib/http/http1_slots.ts";
import { FakeTime } from "../fake_time.ts";

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
  const slots = new Http1Slots(make, 1_500, new FakeTime());
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
  const slots = new Http1Slots(make, 1_500, new FakeTime());
  const a = slots.take(), b = slots.take();
  a.release();
  b.release();
  strictEqual(idOf(slots.take().client), idOf(b.client));
});

Deno.test("Http1Slots: a release counts once; a slot idle past the pool's idle time is closed", async () => {
  const time = new FakeTime();
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500, time);
  const a = slots.take(), b = slots.take();
  a.release();
  a.release();
  strictEqual(slots.idle, 1);
  await time.tick(1_000);
  b.release();
  await time.tick(1_000); // a has been idle 2 s, b 1 s: the timer closed a
  strictEqual(made[0]!.closed, true);
  strictEqual(made[1]!.closed, false);
  const c = slots.take();
  strictEqual(c.client, b.client);
  strictEqual(slots.idle, 0);
  c.release();
});

Deno.test("Http1Slots: after a burst, the idle slots are closed by their timer, with no request to come; the timer keeps no process alive", async () => {
  const time = new FakeTime();
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500, time);
  const burst = Array.from({ length: 8 }, () => slots.take());
  for (const slot of burst) slot.release();
  strictEqual(slots.idle, 8);
  strictEqual(time.held, 0, "an idle slot's timer holds the process");
  await time.tick(1_501);
  strictEqual(slots.idle, 0);
  deepStrictEqual(made.map((m) => m.closed), Array(8).fill(true));
  deepStrictEqual(time.pending, []);
});

Deno.test("Http1Slots: close ends every client, busy or idle; no take after it", () => {
  const { made, make } = fakeClients();
  const slots = new Http1Slots(make, 1_500, new FakeTime());
  const busy = slots.take();
  slots.take().release();
  slots.close();
  deepStrictEqual(made.map((m) => m.closed), [true, true]);
  busy.release();
  strictEqual(slots.idle, 0);
  throws(() => slots.take());
});
