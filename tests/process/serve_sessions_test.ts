/**
 * Several client sessions of `serve` at once against one upstream of
 * revision 2026-07-28 (one child process for all): each session sees only
 * its own answers, progress, log messages, input requests and events; the
 * upstream sees each session's own client information.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "../wait.ts";
import {
  CONFORMANCE_UPSTREAM,
  connectHttp,
  disconnect,
  ServeProcess,
  textOf,
} from "./serve_helpers.ts";

interface Seen {
  questions: string[];
  logs: unknown[];
  updates: string[];
}

/** A client named `name` that records what reaches it. */
async function session(serve: ServeProcess, name: string) {
  const connected = await connectHttp(serve.url(), { elicitation: {} }, name);
  const seen: Seen = { questions: [], logs: [], updates: [] };
  const client: Client = connected.client;
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    seen.questions.push(request.params.message);
    return { action: "accept", content: { a: `${name} answers` } };
  });
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n: { params: { data: unknown } }) => void seen.logs.push(n.params.data),
  );
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => void seen.updates.push(n.params.uri),
  );
  return { name, connected, client, seen };
}

Deno.test("serve: three sessions on one upstream child: each gets only its own answers, progress, log messages, input requests and events", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const sessions = await Promise.all(["alpha", "beta", "gamma"].map((n) => session(serve, n)));
  // One child serves all: the same process answers every session.
  const pids = await Promise.all(
    sessions.map(async (s) => textOf(await s.client.callTool({ name: "pid", arguments: {} }))),
  );
  strictEqual(new Set(pids).size, 1, pids.join());
  strictEqual(serve.stderr.match(/the upstream server started/g)?.length, 1, serve.stderr);
  // The envelope of each request is its own session's: one link, three clients.
  const who = await Promise.all(
    sessions.map(async (s) => textOf(await s.client.callTool({ name: "whoami", arguments: {} }))),
  );
  deepStrictEqual(who.map((w) => JSON.parse(w).name), ["alpha", "beta", "gamma"]);
  // Input rounds at the same time: each question reaches its own client only.
  const answers = await Promise.all(
    sessions.map(async (s) =>
      textOf(await s.client.callTool({ name: "ask", arguments: { question: `${s.name}?` } }))
    ),
  );
  deepStrictEqual(answers, [
    "answered: alpha answers",
    "answered: beta answers",
    "answered: gamma answers",
  ]);
  for (const s of sessions) deepStrictEqual(s.seen.questions, [`${s.name}?`]);
  // Progress at the same time, each under its own token, on its own stream.
  const progress = await Promise.all(sessions.map(async (s) => {
    const got: number[] = [];
    await s.client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
      onprogress: (p: { progress: number }) => got.push(p.progress),
    });
    return got;
  }));
  deepStrictEqual(progress, [[0, 50, 100], [0, 50, 100], [0, 50, 100]]);
  // Log messages of calls at the same time: none reaches another session.
  await Promise.all(sessions.map((s) => s.client.setLoggingLevel("info")));
  await Promise.all(
    sessions.map((s) =>
      s.client.callTool({ name: "say", arguments: { note: `from ${s.name}`, times: 3, ms: 20 } })
    ),
  );
  for (const s of sessions) {
    ok(
      s.seen.logs.every((data) => data === `from ${s.name}`),
      `${s.name}: ${JSON.stringify(s.seen.logs)}`,
    );
  }
  // A call of one session alone: its log messages reach it.
  const before = sessions[1]!.seen.logs.length;
  await sessions[1]!.client.callTool({ name: "say", arguments: { note: "from beta", times: 2 } });
  await waitFor("beta's log messages", () => sessions[1]!.seen.logs.length === before + 2);
  // Subscriptions: an update reaches the sessions that subscribed to its URI only.
  await sessions[0]!.client.subscribeResource({ uri: "test://static-text" });
  await sessions[2]!.client.subscribeResource({ uri: "test://watched-resource" });
  await sessions[1]!.client.callTool({
    name: "touch",
    arguments: { uri: "test://watched-resource" },
  });
  await sessions[1]!.client.callTool({ name: "touch", arguments: { uri: "test://static-text" } });
  await waitFor(
    "both updates",
    () => sessions[0]!.seen.updates.length > 0 && sessions[2]!.seen.updates.length > 0,
  );
  deepStrictEqual(sessions.map((s) => s.seen.updates), [
    ["test://static-text"],
    [],
    ["test://watched-resource"],
  ]);
  for (const s of sessions) await disconnect(s.connected);
  strictEqual(await serve.stop(), 0);
});
