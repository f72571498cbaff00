/**
 * One link shared by the upstream clients of several front ends (`serve`):
 * the ids of their requests never collide on the link, and what belongs to
 * a request (its response, failure, progress, events, the messages of its
 * exchange) reaches its own client only; a log message of no request only
 * when one client alone asked for log messages. And the life of the shared
 * upstream: one start for many front ends, the grace after the last, a new
 * link after the end.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Json, JsonObject } from "../../lib/jsonrpc/message.ts";
import { UpstreamClient } from "../../lib/upstream/client.ts";
import { ENVELOPE_KEYS, SUBSCRIPTION_ID_KEY } from "../../lib/upstream/envelope.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { LinkHub } from "../../lib/upstream/shared_link.ts";
import { SharedUpstream } from "../../lib/upstream/shared_upstream.ts";
import { createLogger } from "../../lib/log.ts";
import { waitFor, within } from "../wait.ts";
import { FakeLink } from "./fake_link.ts";

/** A hub on a fake link, and a client for each of `n` front ends. */
function setup(n: number, lingerMs = 5_000) {
  const link = new FakeLink();
  const lines: string[] = [];
  const log = createLogger("t", "debug", (line) => lines.push(line));
  const hub = new LinkHub(link, { log, lingerMs });
  const clients = Array.from({ length: n }, (_, i) => {
    const logs: Json[] = [];
    const client = new UpstreamClient(hub.attach(() => {}), {
      clientInfo: { name: `client-${i}`, version: "1" },
      capabilities: {},
      onLogMessage: (params) => logs.push(params.data ?? null),
    });
    return { client, logs };
  });
  return { link, hub, clients, lines };
}

async function settled(promise: Promise<Json>): Promise<unknown> {
  try {
    return { result: await within(promise, 2_000, "the request") };
  } catch (error) {
    return { failure: error instanceof UpstreamFailure ? error.kind : String(error) };
  }
}

Deno.test("shared link: the requests of two clients get ids of the hub; each response reaches its own client under its own id", async () => {
  const { link, clients: [a, b] } = setup(2);
  const first = a!.client.request("tools/call", { name: "x" }, {});
  const second = b!.client.request("tools/call", { name: "y" }, {});
  await waitFor("both requests on the link", () => link.requests().length === 2);
  const [ra, rb] = link.requests();
  // Both clients numbered their request 1; the link sees two ids.
  ok(ra!.id !== rb!.id, JSON.stringify(link.requests()));
  deepStrictEqual(
    link.requests().map((r) => (r.params._meta as JsonObject)[ENVELOPE_KEYS.clientInfo]),
    [{ name: "client-0", version: "1" }, { name: "client-1", version: "1" }],
  );
  link.message({ jsonrpc: "2.0", id: rb!.id, result: { for: "b" } });
  link.message({ jsonrpc: "2.0", id: ra!.id, result: { for: "a" } });
  deepStrictEqual(await settled(first), { result: { for: "a" } });
  deepStrictEqual(await settled(second), { result: { for: "b" } });
  link.end({ kind: "closed" });
});

Deno.test("shared link: progress, events, failures and the messages of an exchange go to the request they belong to", async () => {
  const { link, clients: [a, b] } = setup(2);
  const progress: Json[] = [];
  const events: string[] = [];
  const own: Json[] = [];
  const call = a!.client.request("tools/call", {}, {
    onProgress: (p) => progress.push(p.progress ?? null),
    onLog: (params) => own.push(params.data ?? null),
  });
  const listen = b!.client.request("subscriptions/listen", {}, {
    onEvent: (method) => events.push(method),
  });
  const failing = b!.client.request("tools/list", {}, {});
  await waitFor("three requests", () => link.requests().length === 3);
  const [rCall, rListen, rList] = link.requests();
  strictEqual(
    (rCall!.params._meta as JsonObject).progressToken,
    rCall!.id,
    "the token is the hub id",
  );
  link.message({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: rCall!.id, progress: 5 },
  });
  link.message({
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
    params: { _meta: { [SUBSCRIPTION_ID_KEY]: rListen!.id } },
  });
  link.frame({
    kind: "message",
    value: { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: 1 } },
    via: rCall!.id,
  });
  link.frame({ kind: "failed", id: rList!.id, failure: new UpstreamFailure("timeout") });
  deepStrictEqual(await settled(failing), { failure: "timeout" });
  await waitFor("the event", () => events.length === 1);
  deepStrictEqual([progress, events, own], [[5], ["notifications/tools/list_changed"], [1]]);
  deepStrictEqual([a!.logs, b!.logs], [[], []]);
  link.end({ kind: "exited", code: 1 });
  deepStrictEqual(await settled(call), { failure: "exited" });
  deepStrictEqual(await settled(listen), { failure: "exited" });
});

Deno.test("shared link: a log message of no request reaches a client only when it alone asked for log messages", async () => {
  const { link, clients: [a, b], lines } = setup(2, 60_000);
  const log = (data: string) =>
    link.message({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data },
    });
  const noLevel = b!.client.request("tools/call", {}, {});
  const controller = new AbortController();
  const withLevel = a!.client.request("tools/call", {}, {
    logLevel: "debug",
    signal: controller.signal,
  });
  await waitFor("two requests", () => link.requests().length === 2);
  log("only a asked");
  await waitFor("the log of a", () => a!.logs.length === 1);
  const bLevel = b!.client.request("tools/list", {}, { logLevel: "info" });
  await waitFor("three requests", () => link.requests().length === 3);
  log("both asked");
  // a's request is canceled: it still counts while the server may log for it.
  controller.abort("the client canceled the request");
  await settled(withLevel);
  log("a canceled, b asked");
  await waitFor("the frames read", () => link.delivered === 3);
  deepStrictEqual([a!.logs, b!.logs], [["only a asked"], []]);
  ok(lines.some((l) => l.includes("belongs to no one client session")), lines.join(""));
  link.end({ kind: "closed" });
  await Promise.allSettled([noLevel, bLevel]);
});

Deno.test("shared link: a log message on the exchange of a request that is over reaches no client, not even the one that alone asks for log messages", async () => {
  const { link, clients: [a, b], lines } = setup(2);
  const own: Json[] = [];
  const done = a!.client.request("tools/call", {}, {
    logLevel: "debug",
    onLog: (params) => own.push(params.data ?? null),
  });
  const other = b!.client.request("tools/call", {}, { logLevel: "debug" });
  await waitFor("two requests", () => link.requests().length === 2);
  const [ra] = link.requests();
  link.message({ jsonrpc: "2.0", id: ra!.id, result: {} });
  deepStrictEqual(await settled(done), { result: {} });
  // The link says whose exchange it came on: a's, whose request is over. b alone asks for
  // log messages now, but the message is not b's.
  link.frame({
    kind: "message",
    value: { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: 1 } },
    via: ra!.id,
  });
  await waitFor("the frame read", () => link.delivered === 2);
  deepStrictEqual([own, a!.logs, b!.logs], [[], [], []]);
  ok(lines.some((l) => l.includes("dropped a log message")), lines.join(""));
  link.end({ kind: "closed" });
  await settled(other);
});

Deno.test("shared link: a canceled request stops counting for the log messages after the linger", async () => {
  const { link, clients: [a, b] } = setup(2, 20);
  const controller = new AbortController();
  const canceled = a!.client.request("tools/call", {}, {
    logLevel: "debug",
    signal: controller.signal,
  });
  const other = b!.client.request("tools/call", {}, { logLevel: "debug" });
  await waitFor("two requests", () => link.requests().length === 2);
  controller.abort("stop");
  await settled(canceled);
  await new Promise((resolve) => setTimeout(resolve, 60));
  link.message({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: "b's" },
  });
  await waitFor("the log of b", () => b!.logs.length === 1);
  deepStrictEqual(a!.logs, []);
  link.end({ kind: "closed" });
  await settled(other);
});

Deno.test("shared link: a client that leaves cancels its requests upstream; the others go on; ping is answered by the hub", async () => {
  const { link, hub, clients: [a, b] } = setup(2);
  const left = a!.client.request("tools/call", {}, {});
  const stays = b!.client.request("tools/call", {}, {});
  await waitFor("two requests", () => link.requests().length === 2);
  const [ra, rb] = link.requests();
  await a!.client.close();
  deepStrictEqual(await settled(left), { failure: "closed" });
  strictEqual(hub.size, 1);
  const cancel = link.notifications().find((n) => n.method === "notifications/cancelled");
  deepStrictEqual(cancel?.params.requestId, ra!.id);
  deepStrictEqual(
    (cancel?.params._meta as JsonObject)[ENVELOPE_KEYS.clientInfo],
    { name: "client-0", version: "1" },
  );
  link.message({ jsonrpc: "2.0", id: 99, method: "ping" });
  link.message({ jsonrpc: "2.0", id: ra!.id, result: { late: true } });
  link.message({ jsonrpc: "2.0", id: rb!.id, result: { ok: true } });
  deepStrictEqual(await settled(stays), { result: { ok: true } });
  ok(link.sent.some((m) => "id" in m && m.id === 99 && "result" in m), "ping answered");
  link.end({ kind: "closed" });
});

Deno.test("shared upstream: one start for many front ends; it stops after the grace; a new one after its end", async () => {
  const links: FakeLink[] = [];
  const lines: string[] = [];
  const shared = new SharedUpstream({
    connect: () => {
      const link = new FakeLink();
      links.push(link);
      return Promise.resolve(link);
    },
    graceMs: 30,
    log: createLogger("t", "info", (line) => lines.push(line)),
  });
  const [one, two] = await Promise.all([shared.connect(), shared.connect()]);
  strictEqual(links.length, 1, "both on one link");
  await one!.close();
  await new Promise((resolve) => setTimeout(resolve, 60));
  strictEqual(links[0]!.closes, 0, "a front end still uses it");
  await two!.close();
  await waitFor("the stop after the grace", () => links[0]!.closes === 1);
  ok(!shared.running);
  const three = await shared.connect();
  strictEqual(links.length, 2, "the next initialize starts a new link");
  links[1]!.end({ kind: "exited", code: 3 });
  deepStrictEqual(await three.ended, { kind: "exited", code: 3 });
  await waitFor("the error line", () => lines.some((l) => l.includes("code 3")));
  await shared.connect();
  strictEqual(links.length, 3);
  await shared.close();
  strictEqual(links[2]!.closes, 1);
  ok(lines.some((l) => l.includes("no session for 30 ms")), lines.join(""));
});

Deno.test("shared upstream: a link that cannot start fails that connect only; the next one tries again", async () => {
  let tries = 0;
  const shared = new SharedUpstream({
    connect: () => {
      tries++;
      return tries === 1
        ? Promise.reject(new UpstreamFailure("spawn_failed"))
        : Promise.resolve(new FakeLink());
    },
    graceMs: 10,
    log: createLogger("t", "error", () => {}),
  });
  const failed = await shared.connect().then(() => "started", (e) => (e as UpstreamFailure).kind);
  strictEqual(failed, "spawn_failed");
  const link = await shared.connect();
  strictEqual(tries, 2);
  await link.close();
  await shared.close();
});

Deno.test("shared link: a link that can no longer send: every client's later requests fail at once and are not sent, the ones in flight get their answers", async () => {
  const { link, clients: [a, b] } = setup(2);
  const early = a!.client.request("tools/call", { name: "x" }, {});
  await waitFor("the early request on the link", () => link.requests().length === 1);
  link.endSend(new UpstreamFailure("closed"));
  await waitFor("both clients know", () => a!.client.cannotSend && b!.client.cannotSend);
  for (const { client } of [a!, b!]) {
    deepStrictEqual(await settled(client.request("tools/list", {}, {})), { failure: "closed" });
  }
  strictEqual(link.requests().length, 1, "nothing more was sent");
  link.message({ jsonrpc: "2.0", id: link.requests()[0]!.id, result: { early: true } });
  deepStrictEqual(await settled(early), { result: { early: true } });
  link.end({ kind: "closed" });
});

Deno.test("shared upstream: a link that can no longer send is retired: a new front end gets a new link, the old one stops at once after its last front end", async () => {
  const links: FakeLink[] = [];
  const lines: string[] = [];
  const shared = new SharedUpstream({
    connect: () => {
      const link = new FakeLink();
      links.push(link);
      return Promise.resolve(link);
    },
    graceMs: 60_000,
    log: createLogger("t", "info", (line) => lines.push(line)),
  });
  const [one, two] = await Promise.all([shared.connect(), shared.connect()]);
  links[0]!.endSend(new UpstreamFailure("closed"));
  deepStrictEqual(await one!.sendEnded, new UpstreamFailure("closed"));
  const three = await shared.connect();
  strictEqual(links.length, 2, "a new link for the new front end");
  strictEqual(three.sendEnded === one!.sendEnded, false);
  deepStrictEqual(lines, [
    "[t] info: the upstream server started: every session shares it\n",
    "[t] info: the upstream server closed its stdin: each later request of its sessions fails; " +
    "the next initialize starts a new one, and this one stops when its last session has left\n",
    "[t] info: the upstream server started: every session shares it\n",
  ]);
  await one!.close();
  strictEqual(links[0]!.closes, 0, "a front end still uses it");
  await two!.close();
  // Not after the grace of 60 s: a link that cannot send is of use to no one.
  strictEqual(links[0]!.closes, 1);
  strictEqual(links[1]!.closes, 0);
  await three.close();
  await shared.close();
  strictEqual(links[1]!.closes, 1);
});

Deno.test("shared upstream: a child stopped by a signal is logged so, not with 'code null'", async () => {
  const link = new FakeLink();
  const lines: string[] = [];
  const shared = new SharedUpstream({
    connect: () => Promise.resolve(link),
    graceMs: 10,
    log: createLogger("t", "info", (line) => lines.push(line)),
  });
  const front = await shared.connect();
  link.end({ kind: "exited", code: null });
  await front.ended;
  await waitFor("the error line", () => lines.some((l) => l.includes("error:")));
  deepStrictEqual(lines.filter((l) => l.includes("error:")), [
    "[t] error: the upstream server process stopped by a signal; " +
    "the next initialize starts it again\n",
  ]);
  await shared.close();
});
