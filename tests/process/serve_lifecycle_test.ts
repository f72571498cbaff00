/**
 * The life of `serve` and of its shared upstream, as a real program: the
 * upstream child stops with sessions open (each of their requests gets
 * upstream_exited, as on stdio; the next initialize starts a new child), it
 * stops a grace time after the last session ended, SIGTERM lets the
 * requests in flight finish, the address rules of the command line (exit
 * 2), a bearer token, and several named upstreams from `--config`.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { runBridge } from "./helpers.ts";
import { waitFor } from "../wait.ts";
import {
  alive,
  CONFORMANCE_UPSTREAM,
  connectHttp,
  disconnect,
  failure,
  ServeProcess,
  textOf,
} from "./serve_helpers.ts";

/** The data of the error of a request that failed. */

Deno.test("serve: the upstream child stops with sessions open: their requests get upstream_exited; the next initialize starts a new child; it stops after the grace", async () => {
  await using serve = await ServeProcess.start([
    "--upstream-grace",
    "0.2",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const a = await connectHttp(serve.url(), {}, "a");
  const b = await connectHttp(serve.url(), {}, "b");
  const firstPid = Number(textOf(await a.client.callTool({ name: "pid", arguments: {} })));
  const inFlight = failure(a.client.callTool({ name: "slow", arguments: { ms: 20_000 } }));
  const died = failure(b.client.callTool({ name: "die", arguments: {} }));
  deepStrictEqual(await inFlight, { code: -32603, cause: "upstream_exited" });
  deepStrictEqual(await died, { code: -32603, cause: "upstream_exited" });
  // As a stdio bridge after the loss of its child: each later request gets the error; ping works.
  deepStrictEqual(await failure(a.client.listTools()), { code: -32603, cause: "upstream_exited" });
  await a.client.ping();
  await waitFor(
    "the line of the loss",
    () => serve.stderr.includes("the next initialize starts it again"),
  );
  // A new session starts a new child.
  const c = await connectHttp(serve.url(), {}, "c");
  const secondPid = Number(textOf(await c.client.callTool({ name: "pid", arguments: {} })));
  ok(secondPid !== firstPid && alive(secondPid), `${firstPid} ${secondPid}`);
  for (const s of [a, b, c]) await disconnect(s);
  // The last session ended: the child stops after the grace.
  await waitFor("the stop after the grace", () => !alive(secondPid), { timeoutMs: 10_000 });
  // The line is written before the stop, but through the log's queue: it may come after the exit.
  await waitFor("the line of the stop", () => serve.stderr.includes("no session for 200 ms"));
  strictEqual(await serve.stop(), 0);
});

Deno.test("serve: SIGTERM: new requests are refused, a request in flight finishes within --shutdown-grace, the upstream stops; exit 0", async () => {
  await using serve = await ServeProcess.start([
    "--shutdown-grace",
    "10",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const a = await connectHttp(serve.url());
  const pid = Number(textOf(await a.client.callTool({ name: "pid", arguments: {} })));
  const call = a.client.callTool({ name: "slow", arguments: { ms: 1_000 } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  serve.child.kill("SIGTERM");
  await waitFor("the stop line", () => serve.stderr.includes("stopping"));
  const refused = await fetch(serve.url(), { method: "POST", body: "{}" }).then(
    async (r) => (await r.body?.cancel(), r.status),
    () => "refused",
  );
  ok(refused === 503 || refused === "refused", String(refused));
  strictEqual(textOf(await call), "slow done");
  strictEqual(await serve.stop(), 0);
  ok(!alive(pid), "the upstream child stopped");
  await a.client.close();
});

Deno.test("serve: SIGTERM: a request in flight that waits for the client's answer still gets it and finishes", async () => {
  await using serve = await ServeProcess.start([
    "--shutdown-grace",
    "20",
    "--",
    ...CONFORMANCE_UPSTREAM,
  ]);
  const a = await connectHttp(serve.url(), { elicitation: {} });
  const asked = Promise.withResolvers<void>();
  const answer = Promise.withResolvers<void>();
  a.client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.resolve();
    await answer.promise;
    return { action: "accept", content: { a: "after SIGTERM" } };
  });
  const call = a.client.callTool({ name: "ask", arguments: { question: "?" } });
  await asked.promise;
  serve.child.kill("SIGTERM");
  await waitFor("the stop line", () => serve.stderr.includes("stopping"));
  answer.resolve();
  strictEqual(textOf(await call), "answered: after SIGTERM");
  strictEqual(await serve.stop(), 0);
  await a.client.close();
});

Deno.test("serve: an address that is not loopback needs --token-env (exit 2); a bad port or replica is exit 2 too", async () => {
  const cases: [string[], RegExp][] = [
    [["--host", "0.0.0.0"], /needs --token-env/],
    [["--port", "70000"], /--port needs/],
    [["--replica", "a.b"], /--replica needs/],
    [["--token-env", "MISSING_TOKEN_VARIABLE"], /MISSING_TOKEN_VARIABLE is not set/],
    [["--max-sessions", "0"], /--max-sessions needs/],
  ];
  for (const [flags, reason] of cases) {
    const run = await runBridge(["serve", ...flags, "--", "node", "x.js"]);
    strictEqual(run.code, 2, `${flags.join(" ")}: ${run.stderr}`);
    ok(reason.test(run.stderr), run.stderr);
    ok(run.stderr.includes("Run 'mcp-bridge-vscode --help'"), run.stderr);
  }
});

Deno.test("serve: with --token-env, a client without the token gets 401; the v1 SDK client with it works", async () => {
  await using serve = await ServeProcess.start(
    ["--token-env", "SERVE_TOKEN", "--", ...CONFORMANCE_UPSTREAM],
    { SERVE_TOKEN: "t0ken-for-the-test" },
  );
  const bare = await fetch(serve.url(), { method: "POST", body: "{}" });
  strictEqual(bare.status, 401);
  await bare.body?.cancel();
  const transport = new StreamableHTTPClientTransport(serve.url(), {
    requestInit: { headers: { authorization: "Bearer t0ken-for-the-test" } },
  });
  const client = new Client({ name: "with-token", version: "1" });
  await client.connect(transport);
  ok((await client.listTools()).tools.length > 0);
  await transport.terminateSession();
  await client.close();
  strictEqual(await serve.stop(), 0);
  ok(!serve.stderr.includes("t0ken-for-the-test"), "the token is never logged");
});

Deno.test("serve --config: several named upstreams, each at /NAME/mcp with its own options and its own child", async () => {
  const dir = await Deno.makeTempDir();
  const config = `${dir}/servers.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      servers: {
        one: { args: ["--tool", "pid", "--", ...CONFORMANCE_UPSTREAM] },
        two: { args: ["--tool", "whoami", "--tool", "pid", "--", ...CONFORMANCE_UPSTREAM] },
      },
    }),
  );
  try {
    await using serve = await ServeProcess.start(["--config", config]);
    ok(
      /listening on http:\/\/127\.0\.0\.1:\d+ \(\/one\/mcp, \/two\/mcp\)/.test(serve.stderr),
      serve.stderr,
    );
    strictEqual((await fetch(serve.url("/mcp"), { method: "POST" })).status, 404);
    const one = await connectHttp(serve.url("/one/mcp"));
    const two = await connectHttp(serve.url("/two/mcp"));
    deepStrictEqual((await one.client.listTools()).tools.map((t: { name: string }) => t.name), [
      "pid",
    ]);
    deepStrictEqual(
      (await two.client.listTools()).tools.map((t: { name: string }) => t.name).sort(),
      ["pid", "whoami"],
    );
    const pids = await Promise.all(
      [one, two].map(async (s) => textOf(await s.client.callTool({ name: "pid", arguments: {} }))),
    );
    ok(pids[0] !== pids[1], "a child for each name");
    // A session belongs to its endpoint: its id is unknown at the other one.
    const other = await fetch(serve.url("/two/mcp"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": one.transport.sessionId!,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    strictEqual(other.status, 404);
    await other.body?.cancel();
    ok(/one: session #1: a new session started/.test(serve.stderr), serve.stderr);
    ok(/two: session #2: a new session started/.test(serve.stderr), serve.stderr);
    await disconnect(one);
    await disconnect(two);
    strictEqual(await serve.stop(), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
