import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeError } from "../../lib/errors/errors.ts";
import { type Flight, Flights } from "../../lib/frontend/flights.ts";
import { server } from "../fixtures/modern_server.ts";
import { waitFor } from "../wait.ts";
import { InProcessBridge } from "./in_process.ts";
import { ConsoleErrors } from "./in_process_tools.ts";

/** The flight, or a failure that names the error of the client. */
function added(result: Flight | BridgeError): Flight {
  if (result instanceof BridgeError) throw new Error(`expected a flight, got ${result.message}`);
  return result;
}

const dataOf = (result: Flight | BridgeError) =>
  result instanceof BridgeError ? result.toJSON() : "a flight";

Deno.test("flights: a new flight is neither canceled nor answered, with its own controller", () => {
  const flights = new Flights(4);
  const a = added(flights.add(1, "tools/call"));
  const b = added(flights.add(2, "tools/list"));
  deepStrictEqual([a.id, a.method, a.canceled, a.answered], [1, "tools/call", false, false]);
  strictEqual(a.controller === b.controller, false);
  strictEqual(a.controller.signal.aborted, false);
});

Deno.test("flights: above the limit too_many_requests, until a flight is removed", () => {
  const flights = new Flights(2);
  const a = added(flights.add(1, "m"));
  added(flights.add(2, "m"));
  deepStrictEqual(dataOf(flights.add(3, "m")), {
    code: -32603,
    message: "The connection has too many requests in flight",
    data: { cause: "too_many_requests" },
  });
  flights.remove(a);
  added(flights.add(3, "m"));
  strictEqual(flights.add(4, "m") instanceof BridgeError, true);
});

Deno.test('flights: an id in flight already is invalid_request_shape; 1 and "1" are two ids', () => {
  const flights = new Flights(8);
  const first = added(flights.add(1, "m"));
  deepStrictEqual(dataOf(flights.add(1, "other")), {
    code: -32600,
    message: "The message is not a valid JSON-RPC 2.0 request.",
    data: { cause: "invalid_request_shape", detail: "the id belongs to a request in flight" },
  });
  added(flights.add("1", "m"));
  // The id is free again once its flight is removed.
  flights.remove(first);
  added(flights.add(1, "m"));
});

Deno.test("flights: remove takes only the flight given, not a later one of the same id", () => {
  const flights = new Flights(8);
  const old = added(flights.add(1, "m"));
  flights.remove(old);
  const now = added(flights.add(1, "m"));
  flights.remove(old); // a late remove of the first flight
  flights.cancel(1, "r");
  strictEqual(now.canceled, true);
});

Deno.test("flights: cancel aborts one flight with the reason, once; an unknown id is ignored", () => {
  const flights = new Flights(8);
  const a = added(flights.add(1, "m"));
  const b = added(flights.add("b", "m"));
  let aborts = 0;
  a.controller.signal.addEventListener("abort", () => aborts++);
  flights.cancel(1, "the client canceled the request");
  flights.cancel(1, "again");
  flights.cancel(99, "nobody");
  deepStrictEqual(
    [a.canceled, a.controller.signal.reason, aborts],
    [true, "the client canceled the request", 1],
  );
  deepStrictEqual([b.canceled, b.controller.signal.aborted], [false, false]);
  // A canceled flight leaves the table at once: its id is free for a new request.
  const again = added(flights.add(1, "m"));
  // The late end of the canceled task does not take the new flight.
  flights.remove(a);
  flights.cancel(1, "the new one");
  strictEqual(again.canceled, true);
});

Deno.test("flights: a canceled flight frees its slot at once; the tasks still ending have a bound of their own", () => {
  const flights = new Flights(2);
  const first = [added(flights.add(1, "m")), added(flights.add(2, "m"))];
  strictEqual(flights.add(3, "m") instanceof BridgeError, true);
  flights.cancel(1, "r");
  flights.cancel(2, "r");
  // Their tasks have not ended; the next requests take their slots.
  const second = [added(flights.add(3, "m")), added(flights.add(4, "m"))];
  flights.cancel(3, "r");
  // Four tasks (two in flight or draining beside two draining): twice the limit, no more.
  deepStrictEqual(dataOf(flights.add(5, "m")), {
    code: -32603,
    message: "The connection has too many requests in flight",
    data: { cause: "too_many_requests" },
  });
  // A draining task that ends gives its room back.
  flights.remove(first[0]!);
  added(flights.add(5, "m"));
  strictEqual(flights.add(6, "m") instanceof BridgeError, true);
  for (const flight of [first[1]!, ...second]) flights.remove(flight);
  added(flights.add(6, "m"));
});

Deno.test("flights: cancelAll aborts every flight with the reason", () => {
  const flights = new Flights(8);
  const all = [
    added(flights.add(1, "m")),
    added(flights.add("x", "m")),
    added(flights.add(3, "m")),
  ];
  flights.cancelAll("the client closed the connection");
  deepStrictEqual(
    all.map((f) => [f.canceled, f.controller.signal.reason]),
    all.map(() => [true, "the client closed the connection"]),
  );
});

Deno.test("a canceled request gets no response; the upstream sees the cancel with the reason", async () => {
  // The fixture's lines, which the process test reads in the stderr of the child.
  using upstream = new ConsoleErrors();
  await using bridge = new InProcessBridge([], server);
  await bridge.initialize();
  await bridge.request(2, "tools/call", {
    name: "slow",
    arguments: { ms: 5000 },
    _meta: { progressToken: "t" },
  });
  await waitFor("the slow call upstream", () => upstream.text.includes("fixture: slow started"));
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 2, reason: "user" },
  });
  await bridge.request(3, "tools/call", { name: "echo", arguments: { text: "x" } });
  deepStrictEqual((await bridge.next())?.id, 3);
  // The slow tool ends at the cancel; whatever the upstream server writes for 2
  // comes before its answer to a later ping, and the bridge must drop it.
  await waitFor(
    "the cancel upstream",
    () => upstream.text.includes("slow canceled: the client canceled the request"),
  );
  await bridge.request(4, "ping");
  deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 4, result: {} });
  strictEqual(await bridge.exit(), 0);
  deepStrictEqual(await bridge.rest(500), []);
});

/** The lines of `count` calls from `first`: the tool `name` with `args`. */
function calls(first: number, count: number, name: string, args: Record<string, unknown>): string {
  let text = "";
  for (let id = first; id < first + count; id++) {
    text += JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: args },
    }) + "\n";
  }
  return text;
}

/** The lines of the cancels of `count` requests from `first`. */
function cancels(first: number, count: number): string {
  let text = "";
  for (let id = first; id < first + count; id++) {
    text += JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "user" },
    }) + "\n";
  }
  return text;
}

/**
 * `limit` calls in flight, then one write with a cancel of each and as many new
 * calls: each new call gets its result, none is refused, a canceled call gets nothing.
 */
async function cancelsFreeSlots(limit: number, cancelled: number): Promise<void> {
  using upstream = new ConsoleErrors();
  await using bridge = new InProcessBridge(["--max-in-flight", String(limit)], server);
  await bridge.initialize();
  await bridge.writeRaw(calls(1, limit, "slow", { ms: 60_000 }));
  await waitFor(
    "the slow calls upstream",
    () => upstream.text.split("fixture: slow started").length > limit,
  );
  const first = limit + 1;
  await bridge.writeRaw(cancels(1, cancelled) + calls(first, cancelled, "echo", { text: "new" }));
  const answers = [];
  for (let i = 0; i < cancelled; i++) answers.push(await bridge.next());
  deepStrictEqual(
    answers.map((answer) => [answer?.id, answer?.result ? "result" : answer?.error]),
    Array.from({ length: cancelled }, (_, i) => [first + i, "result"]),
  );
  strictEqual(await bridge.exit(), 0);
  // The canceled calls got no response.
  deepStrictEqual(await bridge.rest(500), []);
}

Deno.test("--max-in-flight 4, 4 calls in flight: one read with a cancel and a new call gives the new call its slot", async () => {
  await cancelsFreeSlots(4, 1);
});

Deno.test("256 calls in flight: one write with 256 cancels and 256 new calls refuses none", async () => {
  await cancelsFreeSlots(256, 256);
});
