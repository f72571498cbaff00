/**
 * `--protocol auto` in front of an upstream of revision 2025-11-25 that lies
 * about ids, over stdio (tests/fixtures/lying_ids_server.ts) and over HTTP
 * (tests/fixtures/legacy_http_server.ts): a response to an id never sent,
 * the same response twice, an id of the other type, a request of the server
 * under the id of a call in flight, and over HTTP the response of one request
 * on the stream of another or on the GET stream. Each request of the client
 * gets exactly one response, under its id as sent, never the lie; what was
 * dropped has a debug line.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { BridgeProcess, DENO, ROOT } from "./helpers.ts";

type Json = Record<string, unknown>;

const LYING = [DENO, "run", "-A", `${ROOT}tests/fixtures/lying_ids_server.ts`];
const enc = new TextEncoder();
const event = (message: unknown) =>
  enc.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
const text = (message: Json) =>
  ((message.result as { content?: { text?: string }[] } | undefined)?.content ?? [])[0]?.text;
const responses = (messages: Json[]) =>
  messages.filter((m) => typeof m.method !== "string" && ("result" in m || "error" in m));

/** Every message of the bridge after its last call, with the exit code 0. */
async function rest(bridge: BridgeProcess): Promise<Json[]> {
  strictEqual(await bridge.exit(), 0, bridge.stderr);
  return [...bridge.queued] as Json[];
}

/** The bridge with `--protocol auto` in front of `upstream`, its log at debug (the dropped lines). */
function autoBridge(...upstream: string[]): BridgeProcess {
  return new BridgeProcess(["--protocol", "auto", "--log-level", "debug", ...upstream]);
}

Deno.test("auto over stdio: a response to an id never sent, one sent twice and one with the id of the other type are dropped; each call gets its one real response", async () => {
  await using bridge = autoBridge("--", ...LYING);
  await bridge.initialize({}, true);
  const got: Json[] = [];
  for (const [id, name] of [[1, "stranger"], ["2", "twice"], ["1", "flip"], [2, "flip"]] as const) {
    await bridge.request(id, "tools/call", { name, arguments: {} });
    const answer = await bridge.response(id);
    strictEqual(typeof answer.id, typeof id, "the id as sent");
    got.push(answer);
  }
  deepStrictEqual(got.map(text), ["real stranger", "real twice", "real flip", "real flip"]);
  deepStrictEqual(responses(await rest(bridge)), [], "no second response, no lie");
  ok(bridge.stderr.includes("dropped an upstream response for the unknown id 9999"), bridge.stderr);
  ok(bridge.stderr.includes("dropped an upstream response whose id is not one of the bridge's"));
});

Deno.test("auto over stdio: a request of the server under the id of a call in flight reaches the client under a b- id; the call gets its one response", async () => {
  await using bridge = autoBridge("--", ...LYING);
  await bridge.initialize({}, true);
  for (const id of [1, "b-1"]) {
    await bridge.request(id, "tools/call", { name: "collide", arguments: {} });
    const ping = await bridge.take((m) => m.method === "ping");
    ok(ping && typeof ping.id === "string" && ping.id.startsWith("b-"), JSON.stringify(ping));
    await bridge.send({ jsonrpc: "2.0", id: ping.id, result: {} });
    const answer = await bridge.response(id);
    strictEqual(text(answer), "real collide");
  }
  deepStrictEqual(responses(await rest(bridge)), []);
});

/** A POST's SSE stream that the test writes to, by the tool's name. */
interface Held {
  readonly id: unknown;
  readonly stream: ReadableStreamDefaultController<Uint8Array>;
}

function holdingServer(answers: Map<string, () => void>) {
  const held = new Map<string, Held>();
  const upstream = serveLegacy({
    getStream: true,
    tool: (name, id) => {
      if (name === "undefined") {
        // An answer of the client to a request of the server: its POST gets the
        // response of the call in flight (a lie: it is not a request), then the call its own.
        const lie = Response.json(result(held.get("c")?.id, "fake"));
        for (const done of answers.values()) done();
        return lie;
      }
      if (name === "json_b") {
        // A JSON body of this request that holds the response of "b", in flight.
        return Response.json(result(held.get("b")?.id, "fake"));
      }
      const lies: Record<string, Json[]> = {
        stranger: [{ id: 9999 }, { id }],
        twice: [{ id }, { id }],
        flip: [{ id: typeof id === "number" ? String(id) : Number(id) }, { id }],
      };
      const body = new ReadableStream<Uint8Array>({
        start(stream) {
          if (lies[name]) {
            for (const lie of lies[name]) {
              const real = lie.id === id && !(name === "twice" && lie !== lies[name][0]);
              stream.enqueue(event({
                jsonrpc: "2.0",
                ...lie,
                result: { content: [{ type: "text", text: real ? `real ${name}` : "fake" }] },
              }));
            }
            stream.close();
          } else held.set(name, { id, stream });
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return { upstream, held };
}

async function until<T>(what: () => T | undefined, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

const result = (id: unknown, words: string) => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: words }] },
});

Deno.test("auto over HTTP: a response to an id never sent, one sent twice and one with the id of the other type are dropped; each call gets its one real response", async () => {
  const { upstream } = holdingServer(new Map());
  await using _ = upstream;
  await using bridge = autoBridge(upstream.url);
  await bridge.initialize({}, true);
  const got: Json[] = [];
  for (const [id, name] of [[1, "stranger"], ["2", "twice"], ["1", "flip"], [2, "flip"]] as const) {
    await bridge.request(id, "tools/call", { name, arguments: {} });
    const answer = await bridge.response(id);
    strictEqual(typeof answer.id, typeof id, "the id as sent");
    got.push(answer);
  }
  deepStrictEqual(got.map(text), ["real stranger", "real twice", "real flip", "real flip"]);
  deepStrictEqual(responses(await rest(bridge)), []);
  ok(bridge.stderr.includes("dropped a response"), bridge.stderr);
});

Deno.test("auto over HTTP: the response of B on the stream of A is dropped; B gets its own, A a transport_failed when its stream ends without its response", async () => {
  const { upstream, held } = holdingServer(new Map());
  await using _ = upstream;
  await using bridge = autoBridge(upstream.url);
  await bridge.initialize({}, true);
  await bridge.request("A", "tools/call", { name: "a", arguments: {} });
  await bridge.request("B", "tools/call", { name: "b", arguments: {} });
  const a = await until(() => held.get("a"));
  const b = await until(() => held.get("b"));
  a.stream.enqueue(event(result(b.id, "fake")));
  await new Promise((r) => setTimeout(r, 200));
  b.stream.enqueue(event(result(b.id, "real b")));
  b.stream.close();
  strictEqual(text(await bridge.response("B")), "real b");
  a.stream.close();
  const answerA = await bridge.response("A");
  deepStrictEqual((answerA.error as Json | undefined)?.data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  deepStrictEqual(responses(await rest(bridge)), []);
  ok(bridge.stderr.includes("is not the response of its request"), bridge.stderr);
});

Deno.test("auto over HTTP: the response of B in the JSON body of A is dropped; A gets invalid_response at once, B its own", async () => {
  const { upstream, held } = holdingServer(new Map());
  await using _ = upstream;
  await using bridge = autoBridge(upstream.url);
  await bridge.initialize({}, true);
  await bridge.request("B", "tools/call", { name: "b", arguments: {} });
  const b = await until(() => held.get("b"));
  await bridge.request("A", "tools/call", { name: "json_b", arguments: {} });
  deepStrictEqual(((await bridge.response("A")).error as Json | undefined)?.data, {
    cause: "invalid_response",
    detail: "HTTP status 200",
  });
  b.stream.enqueue(event(result(b.id, "real b")));
  b.stream.close();
  strictEqual(text(await bridge.response("B")), "real b");
  deepStrictEqual(responses(await rest(bridge)), []);
  ok(bridge.stderr.includes("is not the response of its request"), bridge.stderr);
});

Deno.test("auto over HTTP: a response on the GET stream is dropped (2025-11-25 sends none there); the call gets the one of its POST", async () => {
  const { upstream, held } = holdingServer(new Map());
  await using _ = upstream;
  await using bridge = autoBridge(upstream.url);
  await bridge.initialize({}, true);
  await until(() => upstream.streams() > 0 || undefined);
  await bridge.request("G", "tools/call", { name: "g", arguments: {} });
  const g = await until(() => held.get("g"));
  upstream.push(result(g.id, "fake"));
  await new Promise((r) => setTimeout(r, 200));
  g.stream.enqueue(event(result(g.id, "real g")));
  g.stream.close();
  strictEqual(text(await bridge.response("G")), "real g");
  deepStrictEqual(responses(await rest(bridge)), []);
  ok(bridge.stderr.includes("dropped a response on the GET stream"), bridge.stderr);
});

Deno.test("auto over HTTP: a request of the server under the id of the call in flight goes to the client under a b- id; the call gets its one response, not the one in the body of the POST of the answer", async () => {
  const answers = new Map<string, () => void>();
  const { upstream, held } = holdingServer(answers);
  await using _ = upstream;
  await using bridge = autoBridge(upstream.url);
  await bridge.initialize({}, true);
  await bridge.request(1, "tools/call", { name: "c", arguments: {} });
  const c = await until(() => held.get("c"));
  answers.set("c", () => {
    c.stream.enqueue(event(result(c.id, "real c")));
    c.stream.close();
  });
  c.stream.enqueue(event({ jsonrpc: "2.0", id: c.id, method: "ping" }));
  const ping = await bridge.take((m) => m.method === "ping");
  ok(ping && typeof ping.id === "string" && ping.id.startsWith("b-"), JSON.stringify(ping));
  await bridge.send({ jsonrpc: "2.0", id: ping.id, result: {} });
  strictEqual(text(await bridge.response(1)), "real c");
  deepStrictEqual(responses(await rest(bridge)), []);
});
