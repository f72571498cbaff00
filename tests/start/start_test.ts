import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { type Started, type StartOptions, startUpstream } from "../../lib/start/start.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";
import { ENVELOPE_KEYS } from "../../lib/upstream/envelope.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { assertExcludes } from "../assert.ts";
import { FakeLink } from "../upstream/fake_link.ts";
import { waitFor, within } from "../wait.ts";

/** The start over `connect`, with its log lines. */
function start(connect: StartOptions["connect"], options: Partial<StartOptions> = {}) {
  const logs: string[] = [];
  const started = startUpstream({
    connect,
    clientInfo: { name: "vscode", version: "1.99", extra: "dropped" },
    capabilities: { roots: { listChanged: true }, sampling: {} },
    discoverTimeoutMs: 2_000,
    signal: new AbortController().signal,
    log: createLogger("t", "debug", (line) => logs.push(line)),
    onLogMessage: () => {},
    ...options,
  });
  return { started: within(started, 3_000, "end of the start"), logs };
}

const errorOf = (started: Started) => started.kind === "failed" ? started.error.toJSON() : started;

/** A link that the test plays, and the connect that gives it. */
function fakeConnect() {
  const link = new FakeLink();
  return { link, connect: () => Promise.resolve(link) };
}

/** The discover request that the start sent. */
const discoverSent = (link: FakeLink) =>
  waitFor("the server/discover request", () => link.requests()[0]);

Deno.test("start: a connect that rejects with spawn_failed or connect_failed keeps its cause", async () => {
  for (const kind of ["spawn_failed", "connect_failed"] as const) {
    const { started, logs } = start(() => Promise.reject(new UpstreamFailure(kind)));
    const result = await started;
    strictEqual(result.kind, "failed");
    deepStrictEqual((errorOf(result) as { data: unknown }).data, { cause: kind });
    deepStrictEqual(logs, [`[t] error: cannot start the upstream server: ${kind}\n`]);
    deepStrictEqual((errorOf(result) as { data: unknown }).data, { cause: kind });
    if (result.kind === "failed") await within(result.stopped, 100, "stopped");
  }
});

Deno.test("start: any other rejection of connect is spawn_failed, and its message is not logged", async () => {
  const { started, logs } = start(() =>
    Promise.reject(new Error("No such file: /home/user/secret-path/server"))
  );
  const result = await started;
  deepStrictEqual((errorOf(result) as { data: unknown }).data, { cause: "spawn_failed" });
  assertExcludes(logs.join(""), "secret-path");
});

Deno.test("start: ready with the discover result; the envelope has the translated client", async () => {
  const { link, connect } = fakeConnect();
  const { started } = start(connect);
  const request = await discoverSent(link);
  strictEqual(request.method, "server/discover");
  const meta = request.params._meta as JsonObject;
  deepStrictEqual(
    [meta[ENVELOPE_KEYS.clientInfo], meta[ENVELOPE_KEYS.clientCapabilities]],
    [{ name: "vscode", version: "1.99" }, { roots: {}, sampling: {} }],
  );
  link.message({ jsonrpc: "2.0", id: request.id, result: { supportedVersions: ["2026-07-28"] } });
  const result = await started;
  if (result.kind !== "ready") throw new Error(`expected ready, got ${result.kind}`);
  deepStrictEqual(result.discover, { supportedVersions: ["2026-07-28"] });
  strictEqual(result.session.link, link);
  await within(result.session.close(), 1_000, "close of the session");
  strictEqual(link.closes, 1);
});

Deno.test("start: a discover error keeps the upstream code, and the upstream is stopped", async () => {
  const { link, connect } = fakeConnect();
  const { started, logs } = start(connect);
  const request = await discoverSent(link);
  link.message({ jsonrpc: "2.0", id: request.id, error: { code: -32001, message: "not ready" } });
  const result = await started;
  deepStrictEqual(errorOf(result), {
    code: -32001,
    message: "The upstream server did not answer server/discover. " +
      "It is not an MCP server of revision 2026-07-28, or it does not respond. " +
      "See the Output channel of the server.",
    data: { cause: "discover_failed", detail: "not ready" },
  });
  if (result.kind === "failed") await within(result.stopped, 1_000, "stopped");
  strictEqual(link.closes, 1);
  deepStrictEqual(logs.filter((l) => l.includes("error:")), [
    "[t] error: initialize failed: discover_failed: not ready\n",
  ]);
});

Deno.test("start: discover failures are mapped once, by mapDiscoverFailure; the line says what the transport saw", async () => {
  const rows: [string, (link: FakeLink, id: number) => void, unknown, string?][] = [
    ["the child stopped", (link) => link.end({ kind: "exited", code: 1 }), {
      cause: "discover_failed",
      detail: "the upstream server process stopped",
    }],
    [
      "a result that is no object",
      (link, id) => link.message({ jsonrpc: "2.0", id, result: "x" }),
      {
        cause: "discover_failed",
        detail: "the response is not valid",
      },
    ],
    ["an HTTP status", (link, id) =>
      link.frame({
        kind: "failed",
        id,
        failure: new UpstreamFailure("transport_failed", { status: 404 }),
      }), { cause: "discover_failed", detail: "HTTP status 404" }],
    [
      "a body that the network cut",
      (link, id) =>
        link.frame({
          kind: "failed",
          id,
          failure: new UpstreamFailure("transport_failed", {
            status: 200,
            transport: "the connection was reset",
          }),
        }),
      { cause: "discover_failed", detail: "HTTP status 200" },
      "the connection was reset",
    ],
    ["a sign-in that failed", (link, id) =>
      link.frame({
        kind: "failed",
        id,
        failure: new UpstreamFailure("sign_in", { signIn: { cause: "sign_in_denied" } }),
      }), { cause: "sign_in_denied" }],
    ["no response in the limit", () => {}, {
      cause: "discover_failed",
      detail: "no response in 50 ms",
    }],
  ];
  for (const [name, act, expected, seen] of rows) {
    const { link, connect } = fakeConnect();
    // A short limit only where the limit is the case: elsewhere it cannot race the answer.
    const discoverTimeoutMs = name === "no response in the limit" ? 50 : 5_000;
    const { started, logs } = start(connect, { discoverTimeoutMs });
    const request = await discoverSent(link);
    act(link, request.id);
    const result = await started;
    deepStrictEqual([name, (errorOf(result) as { data: unknown }).data], [name, expected]);
    // The log line names the cause and the detail of the client's error, and what the
    // transport saw (which the client does not get).
    const { cause, detail } = expected as { cause: string; detail?: string };
    const words = `${cause}${detail === undefined ? "" : `: ${detail}`}`;
    deepStrictEqual(logs.filter((l) => l.includes("error:")), [
      `[t] error: initialize failed: ${words}${seen === undefined ? "" : ` [${seen}]`}\n`,
    ]);
    if (result.kind === "failed") await within(result.stopped, 1_000, "stopped");
  }
});

Deno.test("start: a cancel during discover is canceled, sends the cancel upstream and stops the upstream", async () => {
  const { link, connect } = fakeConnect();
  const controller = new AbortController();
  const { started, logs } = start(connect, { signal: controller.signal });
  const request = await discoverSent(link);
  controller.abort("the client closed the connection");
  const result = await started;
  strictEqual(result.kind, "canceled");
  if (result.kind === "canceled") await within(result.stopped, 1_000, "stopped");
  strictEqual(link.closes, 1);
  deepStrictEqual(
    link.notifications().map((n) => [n.method, n.params.requestId, n.params.reason]),
    [["notifications/cancelled", request.id, "the client closed the connection"]],
  );
  // A cancel is no failure: nothing at the error level.
  deepStrictEqual(logs.filter((l) => l.includes("error:")), []);
});

Deno.test("start: a signal aborted before discover is canceled and sends nothing", async () => {
  const { link, connect } = fakeConnect();
  const controller = new AbortController();
  controller.abort("gone");
  const result = await start(connect, { signal: controller.signal }).started;
  strictEqual(result.kind, "canceled");
  if (result.kind === "canceled") await within(result.stopped, 1_000, "stopped");
  deepStrictEqual([link.sent, link.closes], [[], 1]);
});

Deno.test("start: the hold of the client's output reaches the reader of the link", async () => {
  const { link, connect } = fakeConnect();
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const { started } = start(connect, { hold: () => held });
  const request = await discoverSent(link);
  link.message({ jsonrpc: "2.0", id: request.id, result: {} });
  link.message({ jsonrpc: "2.0", method: "notifications/message", params: {} });
  const result = await started;
  await new Promise((r) => setTimeout(r, 0));
  strictEqual(link.delivered, 1);
  release();
  await waitFor("the second frame", () => link.delivered === 2);
  if (result.kind === "ready") await result.session.close();
});

Deno.test("start: the log line of a failed initialize is one line, cut, and holds only the client's detail", async () => {
  const { link, connect } = fakeConnect();
  const { started, logs } = start(connect);
  const request = await discoverSent(link);
  const message = `Method not found\nsecond line ${"x".repeat(400)}`;
  link.message({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message } });
  const result = await started;
  if (result.kind === "failed") await within(result.stopped, 1_000, "stopped");
  const errors = logs.filter((l) => l.includes("error:"));
  strictEqual(errors.length, 1);
  strictEqual(
    errors[0]!.startsWith("[t] error: initialize failed: discover_failed: Method not found second"),
    true,
    errors[0],
  );
  strictEqual(errors[0]!.endsWith("...\n"), true, errors[0]);
  strictEqual(errors[0]!.length < 300, true);
});
