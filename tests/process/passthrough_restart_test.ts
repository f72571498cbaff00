/**
 * `--protocol auto` in front of server-everything over Streamable HTTP that
 * is killed and started again on the same port (a deploy, a crash): the
 * request in flight fails once, the requests while the server is away fail
 * at once, and when it is back the bridge has a new session behind the
 * client (VS Code, here the v1 SDK client): a call works, the subscription
 * made before the restart gets its updates, and no request is answered
 * twice.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { bridged, everythingHttp } from "./passthrough_helpers.ts";
import { waitFor } from "../wait.ts";

/** A resource of server-everything (any URI can be subscribed to). */
const URI = "demo://resource/static/document/architecture.md";

Deno.test("pass-through: server-everything over HTTP killed and started again on the same port", async () => {
  let server = await everythingHttp();
  const url = server.url;
  const port = Number(new URL(url).port);
  const b = await bridged([url]);
  try {
    await b.client.setLoggingLevel("debug");
    await b.client.subscribeResource({ uri: URI });
    const echo = (message: string) =>
      b.client.callTool({ name: "echo", arguments: { message } }, undefined, { timeout: 5_000 });
    deepStrictEqual((await echo("before")).content, [{ type: "text", text: "Echo: before" }]);
    // A call in flight when the server goes.
    const running = b.client.callTool({
      name: "trigger-long-running-operation",
      arguments: { duration: 30, steps: 30 },
    }).then(() => "result", (error: Error) => error.message);
    await server[Symbol.asyncDispose]();
    const inFlight = await running;
    ok(inFlight.includes("The connection to the upstream server failed"), inFlight);

    // While it is away, each call fails at once.
    const since = performance.now();
    const away = await echo("away").then(() => "result", (error: Error) => error.message);
    ok(away.includes("The connection to the upstream server failed"), away);
    ok(performance.now() - since < 5_000, "no call hangs");

    server = await everythingHttp(port);
    const back = await waitFor("a call that works again", async () => {
      try {
        return await echo("back");
      } catch {
        return undefined;
      }
    }, { timeoutMs: 20_000, intervalMs: 200 });
    deepStrictEqual(back.content, [{ type: "text", text: "Echo: back" }]);
    const updatesBefore = b.recorder.of("notifications/resources/updated").length;
    // server-everything sends the updates of the session's subscriptions once this tool runs.
    await b.client.callTool({ name: "toggle-subscriber-updates", arguments: {} });
    await waitFor(
      "an update of the subscription made before the restart",
      () =>
        b.recorder.of("notifications/resources/updated").slice(updatesBefore).some((p) =>
          p.uri === URI
        ),
      { timeoutMs: 10_000 },
    );
    // The v1 client reports a response to an unknown id: none came.
    deepStrictEqual(b.recorder.errors, []);
    const log = b.stderr();
    const renewals = log.split("\n").filter((line) => line.includes("a new session"));
    strictEqual(renewals.length, 1, log);
    ok(renewals[0]!.includes("info: a new session of the upstream server started"), renewals[0]);
    ok(!log.includes(url), "the URL is never logged");
  } finally {
    await b.client.close();
    await server[Symbol.asyncDispose]();
  }
});
