/**
 * `serve` in front of the other kinds of upstream: a server of revision
 * 2026-07-28 at a URL (one HTTP link for every session: each log message
 * comes on the stream of its request and reaches its own session, also
 * while several sessions call at once), and servers of revision 2025-11-25
 * with `--protocol auto` (a child of its own for each session; the
 * server's requests reach the client of that session only).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createMcpHandler } from "@modelcontextprotocol/server";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { serveRaw } from "../fixtures/http_upstream.ts";
import { server } from "../fixtures/conformance_upstream.ts";
import { DENO, ROOT } from "./helpers.ts";
import { connectHttp, disconnect, ServeProcess, textOf } from "./serve_helpers.ts";

Deno.test("serve: a URL upstream shared by every session: log messages of calls at the same time reach their own sessions, all of them", async () => {
  const handler = createMcpHandler(server, { legacy: "reject", keepAliveMs: 0 });
  await using upstream = serveRaw((request) => handler.fetch(request), "/mcp");
  try {
    await using serve = await ServeProcess.start([upstream.url]);
    const sessions = await Promise.all(["one", "two", "three"].map(async (name) => {
      const connected = await connectHttp(serve.url(), {}, name);
      const logs: unknown[] = [];
      connected.client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (n: { params: { data: unknown } }) => void logs.push(n.params.data),
      );
      await connected.client.setLoggingLevel("info");
      return { name, connected, logs };
    }));
    await Promise.all(sessions.map((s) =>
      s.connected.client.callTool({
        name: "say",
        arguments: { note: `from ${s.name}`, times: 3, ms: 20 },
      })
    ));
    for (const s of sessions) deepStrictEqual(s.logs, Array(3).fill(`from ${s.name}`), s.name);
    const who = await Promise.all(
      sessions.map(async (s) =>
        JSON.parse(textOf(await s.connected.client.callTool({ name: "whoami", arguments: {} })))
          .name
      ),
    );
    deepStrictEqual(who, ["one", "two", "three"]);
    for (const s of sessions) await disconnect(s.connected);
    strictEqual(await serve.stop(), 0);
    strictEqual(serve.stderr.match(/the upstream server started/g)?.length, 1, serve.stderr);
  } finally {
    await handler.close();
  }
});

Deno.test("serve --protocol auto: an upstream of revision 2025-11-25 gets a child for each session; its requests reach that session's client only", async () => {
  const legacy = [DENO, "run", "-A", `${ROOT}tests/fixtures/legacy_session_server.ts`];
  await using serve = await ServeProcess.start(["--protocol", "auto", "--", ...legacy]);
  const sessions = await Promise.all(["left", "right"].map(async (name) => {
    const connected = await connectHttp(serve.url(), { elicitation: {} }, name);
    const questions: string[] = [];
    connected.client.setRequestHandler(
      ElicitRequestSchema,
      (request: { params: { message: string } }) => {
        questions.push(request.params.message);
        return { action: "accept", content: { a: `${name} answers` } };
      },
    );
    return { name, connected, questions };
  }));
  strictEqual(sessions[0]!.connected.client.getServerVersion()?.name, "legacy-sessions");
  const pids = await Promise.all(
    sessions.map(async (s) =>
      textOf(await s.connected.client.callTool({ name: "pid", arguments: {} }))
    ),
  );
  ok(pids[0] !== pids[1], `a child for each session: ${pids.join(" ")}`);
  const answers = await Promise.all(sessions.map(async (s) =>
    textOf(
      await s.connected.client.callTool({ name: "ask", arguments: { question: `${s.name}?` } }),
    )
  ));
  deepStrictEqual(answers, ["answered: left answers", "answered: right answers"]);
  deepStrictEqual(sessions.map((s) => s.questions), [["left?"], ["right?"]]);
  for (const s of sessions) await disconnect(s.connected);
  strictEqual(await serve.stop(), 0);
});
