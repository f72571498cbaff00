/**
 * `serve` with the v1 SDK client over `StreamableHTTPClientTransport` (as a
 * VS Code entry `{"type": "http"}` runs it), in front of a real SDK v2
 * server of revision 2026-07-28 on stdio: the same rules as the stdio
 * bridge, each message on its stream (the response, progress, log messages
 * and input requests of a call on that call's stream; list changes and
 * resource updates on the GET stream).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "../wait.ts";
import {
  CONFORMANCE_UPSTREAM,
  connectHttp,
  disconnect,
  ServeProcess,
  textOf,
} from "./serve_helpers.ts";

Deno.test("serve: the v1 SDK client over Streamable HTTP: initialize, lists, a call with progress, log messages and an input round, events on the GET stream", async () => {
  await using serve = await ServeProcess.start(["--", ...CONFORMANCE_UPSTREAM]);
  const connected = await connectHttp(serve.url(), { elicitation: {} });
  const { client, transport } = connected;
  ok(transport.sessionId && /^[A-Za-z0-9_-]{32}$/.test(transport.sessionId), transport.sessionId);
  strictEqual(client.getServerVersion()?.name, "conformance-upstream");
  deepStrictEqual(client.getServerCapabilities()?.tools, { listChanged: true });
  const tools = await client.listTools();
  ok(tools.tools.some((t: { name: string }) => t.name === "test_simple_text"));
  strictEqual(
    textOf(await client.callTool({ name: "test_simple_text", arguments: {} })),
    "This is a simple text response for testing.",
  );
  // Progress under the client's token, before the result.
  const progress: number[] = [];
  await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
    onprogress: (p: { progress: number }) => progress.push(p.progress),
  });
  deepStrictEqual(progress, [0, 50, 100]);
  // Log messages of the call's own exchange, at the client's level.
  const logs: unknown[] = [];
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n: { params: { data: unknown } }) => void logs.push(n.params.data),
  );
  await client.setLoggingLevel("info");
  await client.callTool({ name: "test_tool_with_logging", arguments: {} });
  await waitFor("three log messages", () => logs.length === 3);
  deepStrictEqual(logs, [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
  ]);
  // An input round: the bridge asks this client, and sends the answer upstream.
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    strictEqual(request.params.message, "name?");
    return { action: "accept", content: { a: "Ada" } };
  });
  strictEqual(
    textOf(await client.callTool({ name: "ask", arguments: { question: "name?" } })),
    "answered: Ada",
  );
  // Events of the listen stream come on the GET stream.
  const updated: string[] = [];
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => void updated.push(n.params.uri),
  );
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
  await client.subscribeResource({ uri: "test://watched-resource" });
  await client.callTool({ name: "touch", arguments: { uri: "test://watched-resource" } });
  await waitFor("the update", () => updated.includes("test://watched-resource"));
  const before = listChanged;
  await client.callTool({ name: "add_tool", arguments: { name: "fresh" } });
  await waitFor("the list change", () => listChanged > before);
  await disconnect(connected);
  strictEqual(await serve.stop(), 0);
  ok(/listening on http:\/\/127\.0\.0\.1:\d+ \(\/mcp\)/.test(serve.stderr), serve.stderr);
  ok(!serve.stderr.includes(transport.sessionId!), "the session id is never logged");
});
