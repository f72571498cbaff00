/**
 * `serve` as a black box, its sessions: the real program over raw HTTP
 * (`serve_raw.ts`): request ids in flight (again in a session, the same in
 * two sessions, of both types, after a lost connection), progress tokens,
 * ping and logging/setLevel per session, an elicitation and its answer that
 * stay in their session, a list change once to each session, the idle
 * limit, --max-in-flight, the endpoints of --config, and SIGTERM with
 * requests that wait for the back pressure of their session.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { waitFor, within } from "../wait.ts";
import { DENO, ROOT } from "./helpers.ts";
import { alive, CONFORMANCE_UPSTREAM, ServeProcess } from "./serve_helpers.ts";
import {
  call,
  Events,
  INITIALIZE,
  initialize,
  messagesOf,
  type Obj,
  refused,
  send,
  textOf,
} from "./serve_raw.ts";

Deno.test("serve black box: request ids: one in flight used again in its session gets an error at once and the first its own answer; two sessions with the same ids at once each get their own answers, and a cancellation of one leaves the other's", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const a = await initialize(serve, "alpha");
  const b = await initialize(serve, "beta");
  // The same id again while it is in flight, in the same session.
  // The headers of a call's stream come once the bridge took it: it is in flight.
  const first = await send(serve, { session: a, body: call(2, "slow", { ms: 1_000 }) });
  const again = await send(serve, { session: a, body: call(2, "whoami") });
  const [error] = await messagesOf(again);
  strictEqual(error?.id, 2);
  ok(error?.error, JSON.stringify(error));
  strictEqual(textOf((await messagesOf(first)).at(-1)), "slow done");
  // Once it is answered, the id is free again.
  const reused = await send(serve, { session: a, body: call(2, "whoami") });
  strictEqual(JSON.parse(textOf((await messagesOf(reused)).at(-1))).name, "alpha");
  // Both sessions use the ids 3 to 8 at once, with calls that end in another order.
  const calls = (session: string, name: string) =>
    [3, 4, 5, 6, 7, 8].map(async (id) => {
      const body = id % 2 === 0 ? call(id, "slow", { ms: 50 * (9 - id) }) : call(id, "whoami");
      const messages = await messagesOf(await send(serve, { session, body }));
      strictEqual(messages.length, 1, `${name} ${id}: ${JSON.stringify(messages)}`);
      strictEqual(messages[0]!.id, id);
      const text = textOf(messages[0]);
      return id % 2 === 0 ? text : JSON.parse(text).name;
    });
  const [gotA, gotB] = await Promise.all([
    Promise.all(calls(a, "alpha")),
    Promise.all(calls(b, "beta")),
  ]);
  deepStrictEqual(gotA, ["alpha", "slow done", "alpha", "slow done", "alpha", "slow done"]);
  deepStrictEqual(gotB, ["beta", "slow done", "beta", "slow done", "beta", "slow done"]);
  // The same id in flight in both; alpha cancels its own: beta's goes on and gets its answer.
  const slowA = new Events(
    await send(serve, { session: a, body: call(9, "slow", { ms: 2_000 }) }),
  );
  const slowB = await send(serve, { session: b, body: call(9, "slow", { ms: 2_000 }) });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cancel = await send(serve, {
    session: a,
    body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } },
  });
  strictEqual(cancel.status, 202);
  await within(slowA.done, 5_000, "the end of alpha's canceled call");
  deepStrictEqual(slowA.seen, []);
  strictEqual(textOf((await messagesOf(slowB)).at(-1)), "slow done");
  strictEqual(serve.stderr.match(/slow canceled/g)?.length, 1, serve.stderr);
});

Deno.test("serve black box: ping and logging/setLevel are each session's own: one JSON body each, and a session's level filters its own log messages only", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const quiet = await initialize(serve, "quiet");
  const loud = await initialize(serve, "loud");
  for (const [session, level] of [[quiet, "error"], [loud, "debug"]] as const) {
    const set = await send(serve, {
      session,
      body: { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level } },
    });
    strictEqual(set.headers.get("content-type"), "application/json");
    deepStrictEqual(await messagesOf(set), [{ jsonrpc: "2.0", id: 2, result: {} }]);
    const ping = await send(serve, { session, body: { jsonrpc: "2.0", id: 3, method: "ping" } });
    strictEqual(ping.headers.get("content-type"), "application/json");
    deepStrictEqual(await messagesOf(ping), [{ jsonrpc: "2.0", id: 3, result: {} }]);
  }
  // One call at a time: a log message of a stdio upstream (which names no request) reaches the
  // session that alone has calls in flight, on its GET stream. Info messages reach the session
  // at debug, not the one at error.
  const gets = new Map<string, Events>();
  for (const session of [quiet, loud]) {
    gets.set(session, new Events(await send(serve, { session, method: "GET" })));
  }
  const said = async (session: string, note: string) => {
    const messages = await messagesOf(
      await send(serve, { session, body: call(4, "say", { note, times: 2, ms: 10 }) }),
    );
    strictEqual(textOf(messages.at(-1)), "said");
  };
  const logs = (session: string) =>
    [...gets.get(session)!.seen].filter((m) => m.method === "notifications/message").map((m) =>
      (m.params as Obj).data
    );
  await said(quiet, "to quiet");
  await said(loud, "to loud");
  await waitFor("loud's log messages", () => logs(loud).length === 2);
  await said(quiet, "to quiet");
  await new Promise((resolve) => setTimeout(resolve, 200));
  deepStrictEqual(logs(loud), ["to loud", "to loud"]);
  deepStrictEqual(logs(quiet), []);
});

Deno.test("serve black box: an elicitation of one session comes on the stream of its call only; the other session's streams see nothing of it; the answer of one session cannot answer another's", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const a = await initialize(serve, "alpha");
  const b = await initialize(serve, "beta");
  const getA = new Events(await send(serve, { session: a, method: "GET" }));
  const getB = new Events(await send(serve, { session: b, method: "GET" }));
  const askA = new Events(
    await send(serve, { session: a, body: call(2, "ask", { question: "alpha?" }) }),
  );
  const question = await askA.next("alpha's question", (m) => m.method === "elicitation/create");
  strictEqual((question.params as Obj).message, "alpha?");
  // beta answers alpha's question with its id: that answer reaches nothing of alpha's.
  const stolen = await send(serve, {
    session: b,
    body: { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { a: "beta" } } },
  });
  strictEqual(stolen.status, 202);
  await stolen.body?.cancel();
  await new Promise((resolve) => setTimeout(resolve, 200));
  ok(!askA.seen.some((m) => "result" in m), JSON.stringify(askA.seen));
  const answer = await send(serve, {
    session: a,
    body: {
      jsonrpc: "2.0",
      id: question.id,
      result: { action: "accept", content: { a: "alpha" } },
    },
  });
  strictEqual(answer.status, 202);
  await answer.body?.cancel();
  await within(askA.done, 10_000, "the end of alpha's call");
  strictEqual(textOf(askA.seen.at(-1)), "answered: alpha");
  const questions = (events: Events) => events.seen.filter((m) => m.method !== undefined);
  deepStrictEqual(questions(getB).filter((m) => m.method === "elicitation/create"), []);
  deepStrictEqual(questions(getA).filter((m) => m.method === "elicitation/create"), []);
});

Deno.test("serve black box: SIGTERM: a request that waits for the back pressure of its session (a GET stream its client does not read) gets the answer stopping at once, as a request in flight gets it after the grace", async () => {
  await using serve = await ServeProcess.start([
    "--shutdown-grace",
    "10",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const session = await initialize(serve);
  const level = await send(serve, {
    session,
    body: { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "info" } },
  });
  await level.body?.cancel();
  // A GET stream that the client never reads, and 16 MB of log messages for it.
  const get = await send(serve, { session, method: "GET" });
  strictEqual(get.status, 200);
  const say = await send(serve, {
    session,
    body: call(3, "say", { note: "x".repeat(800_000), times: 16 }),
  });
  strictEqual(textOf((await messagesOf(say)).at(-1)), "said");
  // The first request after it is taken; the next ones wait for the client to read.
  const taken = await send(serve, { session, body: { jsonrpc: "2.0", id: 4, method: "ping" } });
  deepStrictEqual(await messagesOf(taken), [{ jsonrpc: "2.0", id: 4, result: {} }]);
  const waiting = [5, 6].map((id) =>
    send(serve, { session, body: { jsonrpc: "2.0", id, method: "ping" } })
  );
  const early = await Promise.race([
    Promise.any(waiting).then(() => "answered"),
    new Promise((resolve) => setTimeout(() => resolve("waits"), 500)),
  ]);
  strictEqual(early, "waits", "the requests did not wait: no back pressure");
  const started = Date.now();
  serve.child.kill("SIGTERM");
  const answers = await within(Promise.all(waiting), 5_000, "the answers of the waiting requests");
  // At once: long before the grace of 10 s.
  ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms, not at once`);
  for (const [i, response] of answers.entries()) {
    strictEqual(response.status, 200);
    deepStrictEqual(await messagesOf(response), [{
      jsonrpc: "2.0",
      id: 5 + i,
      error: {
        code: -32000,
        message: "The server stops. Try again later.",
        data: { cause: "stopping" },
      },
    }]);
  }
  await get.body?.cancel();
  strictEqual(await serve.stop(), 0);
  ok(
    serve.stderr.includes("2 requests that waited for the client's streams get the error stopping"),
    serve.stderr,
  );
});

Deno.test("serve black box: --session-idle: a session with an open GET stream stays; one with no stream and no request ends after the limit (404); the log names it by its number, never by its id", async () => {
  await using serve = await ServeProcess.start([
    "--session-idle",
    "0.5",
    "--log-level",
    "debug",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const kept = await initialize(serve);
  const idle = await initialize(serve);
  const get = new Events(await send(serve, { session: kept, method: "GET" }));
  await waitFor(
    "the end of the idle session",
    () => /session #2: the session ends/.test(serve.stderr),
  );
  await refused(
    await send(serve, { session: idle, body: { jsonrpc: "2.0", id: 2, method: "ping" } }),
    404,
  );
  const pong = await send(serve, {
    session: kept,
    body: { jsonrpc: "2.0", id: 2, method: "ping" },
  });
  deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 2, result: {} }]);
  ok(!get.ended);
  ok(serve.stderr.includes("session #1: a new session started"), serve.stderr);
  for (const id of [kept, idle]) {
    ok(!serve.stderr.includes(id.slice(-12)), "a session id in the log");
  }
});

Deno.test("serve black box: a session's requests in flight are bounded by --max-in-flight (one more gets too_many_requests at once); another session is not bounded by them", async () => {
  await using serve = await ServeProcess.start([
    "--max-in-flight",
    "2",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const a = await initialize(serve);
  const b = await initialize(serve, "beta");
  // The headers of a call's stream come once the bridge took it: both are in flight.
  const slow = await Promise.all(
    [2, 3].map((id) => send(serve, { session: a, body: call(id, "slow", { ms: 1_500 }) })),
  );
  const [over] = await messagesOf(await send(serve, { session: a, body: call(4, "whoami") }));
  strictEqual(over?.id, 4);
  strictEqual((over?.error as { data?: { cause?: string } }).data?.cause, "too_many_requests");
  const others = await Promise.all([5, 6].map(async (id) => {
    const messages = await messagesOf(await send(serve, { session: b, body: call(id, "whoami") }));
    return JSON.parse(textOf(messages.at(-1))).name;
  }));
  deepStrictEqual(others, ["beta", "beta"]);
  for (const response of slow) {
    strictEqual(textOf((await messagesOf(response)).at(-1)), "slow done");
  }
});

Deno.test("serve black box: --config: a session belongs to its endpoint (its id at another endpoint is 404); a second initialize in a session is refused and the session goes on", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const config = `${dir}/servers.json`;
    const args = ["--", ...CONFORMANCE_UPSTREAM];
    await Deno.writeTextFile(
      config,
      JSON.stringify({ servers: { one: { args }, two: { args } } }),
    );
    await using serve = await ServeProcess.start(["--config", config]);
    const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
    const init = await send(serve, { path: "/one/mcp", body: INITIALIZE });
    const session = init.headers.get("mcp-session-id")!;
    ok((await messagesOf(init))[0]?.result);
    await refused(await send(serve, { path: "/two/mcp", session, body: ping }), 404);
    await refused(await send(serve, { path: "/two/mcp", session, method: "GET" }), 404);
    await refused(await send(serve, { path: "/two/mcp", session, method: "DELETE" }), 404);
    const root = await send(serve, { path: "/mcp", session, body: ping });
    strictEqual(root.status, 404);
    await root.body?.cancel();
    const again = await send(serve, { path: "/one/mcp", session, body: { ...INITIALIZE, id: 3 } });
    const [refusal] = await messagesOf(again);
    strictEqual(refusal?.id, 3);
    ok(refusal?.error, JSON.stringify(refusal));
    const pong = await send(serve, { path: "/one/mcp", session, body: ping });
    deepStrictEqual(await messagesOf(pong), [{ jsonrpc: "2.0", id: 2, result: {} }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('serve black box: ids and progress tokens of any type: 7 and "7" in flight at once in one session, and the same progress token in two sessions at once, each get their own', async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const a = await initialize(serve, "alpha");
  const b = await initialize(serve, "beta");
  const both = await Promise.all([7, "7"].map(async (id) => {
    const messages = await messagesOf(
      await send(serve, { session: a, body: call(id, "slow", { ms: 300 }) }),
    );
    deepStrictEqual(messages.map((m) => m.id), [id]);
    return textOf(messages[0]);
  }));
  deepStrictEqual(both, ["slow done", "slow done"]);
  // A canceled string id cancels that request only.
  const canceled = new Events(
    await send(serve, { session: a, body: call("x", "slow", { ms: 2_000 }) }),
  );
  const kept = await send(serve, { session: a, body: call(8, "slow", { ms: 2_000 }) });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cancel = await send(serve, {
    session: a,
    body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "x" } },
  });
  strictEqual(cancel.status, 202);
  await within(canceled.done, 5_000, "the end of the canceled call");
  deepStrictEqual(canceled.seen, []);
  strictEqual(textOf((await messagesOf(kept)).at(-1)), "slow done");
  // The same progress token (a string, and a number that is not the request's id) in both.
  for (const token of ["tok", 42]) {
    const progress = await Promise.all([a, b].map(async (session, i) => {
      const body = call(10 + i, "test_tool_with_progress");
      (body.params as Obj)._meta = { progressToken: token };
      const messages = await messagesOf(await send(serve, { session, body }));
      strictEqual(textOf(messages.at(-1)), "progress done");
      const notes = messages.filter((m) => m.method === "notifications/progress");
      for (const note of notes) strictEqual((note.params as Obj).progressToken, token);
      return notes.map((note) => (note.params as Obj).progress);
    }));
    deepStrictEqual(progress, [[0, 50, 100], [0, 50, 100]], `token ${token}`);
  }
});

Deno.test("serve black box: a list change of the shared upstream reaches every session once, on its GET stream", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const a = await initialize(serve, "alpha");
  const b = await initialize(serve, "beta");
  const gets = await Promise.all(
    [a, b].map(async (session) => new Events(await send(serve, { session, method: "GET" }))),
  );
  // What waited for the streams (the list changes of the start) has come.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = gets.map((g) => g.seen.length);
  const added = await send(serve, { session: a, body: call(2, "add_tool", { name: "fresh" }) });
  strictEqual(textOf((await messagesOf(added)).at(-1)), "added");
  for (const get of gets) {
    await get.next("tools/list_changed", (m) => m.method === "notifications/tools/list_changed");
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const [i, get] of gets.entries()) {
    deepStrictEqual(get.seen.slice(before[i]), [
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
  }
  const list = await send(serve, {
    session: b,
    body: { jsonrpc: "2.0", id: 3, method: "tools/list" },
  });
  const tools = ((await messagesOf(list)).at(-1)?.result as { tools: { name: string }[] }).tools;
  ok(tools.some((tool) => tool.name === "fresh"));
});

Deno.test("serve black box: an id whose POST connection went while its request still runs: the same id again gets an error, never the answer of the first; once the first is over, the id is free", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const session = await initialize(serve);
  const gone = new AbortController();
  const first = await send(serve, {
    session,
    body: call(5, "slow", { ms: 2_000 }),
    signal: gone.signal,
  });
  strictEqual(first.status, 200);
  gone.abort();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const again = await messagesOf(await send(serve, { session, body: call(5, "whoami") }));
  strictEqual(again.length, 1, JSON.stringify(again));
  strictEqual(again[0]!.id, 5);
  ok(again[0]!.error, `not an error: ${JSON.stringify(again)}`);
  const later = await waitFor("the id free again", async () => {
    const messages = await messagesOf(await send(serve, { session, body: call(5, "whoami") }));
    return messages[0]?.result ? messages : undefined;
  }, { timeoutMs: 10_000, intervalMs: 200 });
  deepStrictEqual(later.map((m) => m.id), [5]);
  strictEqual(JSON.parse(textOf(later[0])).name, "blackbox");
});

Deno.test("serve black box: --upstream-grace: a window that reloads within the grace (DELETE, then initialize) gets the same upstream child; after the grace a new session gets a new one", async () => {
  await using serve = await ServeProcess.start([
    "--upstream-grace",
    "1",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const pidOf = async (session: string) =>
    textOf((await messagesOf(await send(serve, { session, body: call(2, "pid") }))).at(-1));
  const end = async (session: string) => {
    const deleted = await send(serve, { session, method: "DELETE" });
    strictEqual(deleted.status, 200);
    await deleted.body?.cancel();
  };
  const first = await initialize(serve);
  const pid = await pidOf(first);
  await end(first);
  const reloaded = await initialize(serve);
  strictEqual(await pidOf(reloaded), pid);
  await end(reloaded);
  await waitFor("the stop after the grace", () => /no session for 1 s/.test(serve.stderr), {
    timeoutMs: 10_000,
  });
  const later = await initialize(serve);
  const newPid = await pidOf(later);
  ok(/^\d+$/.test(newPid) && newPid !== pid, `${pid} ${newPid}`);
  strictEqual(serve.stderr.match(/the upstream server started/g)?.length, 2, serve.stderr);
});

Deno.test("serve black box: a session whose client reads nothing holds only itself: the other sessions of the shared upstream get their answers meanwhile", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const slowReader = await initialize(serve, "slow reader");
  const other = await initialize(serve, "other");
  const level = await send(serve, {
    session: slowReader,
    body: { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "info" } },
  });
  await level.body?.cancel();
  const get = await send(serve, { session: slowReader, method: "GET" });
  strictEqual(get.status, 200);
  const say = await send(serve, {
    session: slowReader,
    body: call(3, "say", { note: "x".repeat(800_000), times: 12 }),
  });
  strictEqual(textOf((await messagesOf(say)).at(-1)), "said");
  // After the next request, its requests wait for its client to read; the other session's not.
  const taken = await send(serve, {
    session: slowReader,
    body: { jsonrpc: "2.0", id: 10, method: "ping" },
  });
  strictEqual(taken.status, 200);
  await taken.body?.cancel();
  const held = send(serve, { session: slowReader, body: call(4, "whoami") });
  const early = await Promise.race([
    held.then(() => "answered"),
    new Promise((resolve) => setTimeout(() => resolve("waits"), 300)),
  ]);
  strictEqual(early, "waits", "no back pressure: the case tests nothing");
  const started = Date.now();
  for (let id = 5; id < 10; id++) {
    const answer = await within(
      send(serve, { session: other, body: call(id, "whoami") }).then(messagesOf),
      5_000,
      "the other session's answer",
    );
    strictEqual(JSON.parse(textOf(answer.at(-1))).name, "other");
  }
  ok(Date.now() - started < 5_000);
  // Once the slow client reads, its request goes on.
  const reading = (async () => {
    for await (const _ of get.body!) {
      // drained
    }
  })();
  const [answer] = await messagesOf(await within(held, 10_000, "the held request"));
  strictEqual(JSON.parse(textOf(answer)).name, "slow reader");
  await send(serve, { session: slowReader, method: "DELETE" }).then((r) => r.body?.cancel());
  await reading;
});

Deno.test("serve black box: --protocol auto with an upstream of revision 2025-11-25: each session's own child stops when its session ends (DELETE, or the idle limit), the other's runs on", async () => {
  const legacy = [DENO, "run", "-A", `${ROOT}tests/fixtures/legacy_session_server.ts`];
  await using serve = await ServeProcess.start([
    "--session-idle",
    "1",
    "--protocol",
    "auto",
    "--",
    ...legacy,
  ]);
  const pidOf = async (session: string) =>
    Number(textOf((await messagesOf(await send(serve, { session, body: call(2, "pid") }))).at(-1)));
  const deleted = await initialize(serve, "deleted");
  const idle = await initialize(serve, "idle");
  const kept = await initialize(serve, "kept");
  const get = new Events(await send(serve, { session: kept, method: "GET" }));
  const [pidDeleted, pidIdle, pidKept] = await Promise.all([deleted, idle, kept].map(pidOf));
  strictEqual(new Set([pidDeleted, pidIdle, pidKept]).size, 3);
  const end = await send(serve, { session: deleted, method: "DELETE" });
  await end.body?.cancel();
  await waitFor("the deleted session's child to stop", () => !alive(pidDeleted!), {
    timeoutMs: 10_000,
  });
  await waitFor("the idle session's child to stop", () => !alive(pidIdle!), {
    timeoutMs: 10_000,
  });
  ok(alive(pidKept!), "the kept session's child stopped");
  ok(!get.ended);
  strictEqual(await pidOf(kept), pidKept);
});
