/** The memory link: an SDK v2 server in the same process, under the upstream client and the front end. */

import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/server";
import { UpstreamClient } from "../../lib/upstream/client.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { buildServer, README_ICON } from "../../scripts/embed_server.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { waitFor } from "../wait.ts";

const CLIENT = { clientInfo: { name: "t", version: "1" }, capabilities: {} };

Deno.test("memory link: server/discover and a call reach the SDK server; not remote, untimed", async () => {
  const link = await connectMemoryLink(buildServer);
  assertEquals(link.isRemote, false);
  assertEquals(link.untimed, true);
  const client = new UpstreamClient(link, CLIENT);
  const discover = await client.discover(1000);
  assertEquals(
    (discover._meta as Record<string, { name: string }>)["io.modelcontextprotocol/serverInfo"]
      ?.name,
    "embedded-example",
  );
  assertEquals(link.serverName, "embedded-example");
  const result = await client.request(
    "tools/call",
    { name: "echo", arguments: { text: "hi" } },
    {},
  );
  assertEquals((result as { content: unknown }).content, [{ type: "text", text: "hi" }]);
  await client.close();
  assertEquals(await link.ended, { kind: "closed" });
});

Deno.test("memory link: a request has no time limit, even with a tiny timeoutMs", async () => {
  const link = await connectMemoryLink(buildServer);
  const client = new UpstreamClient(link, CLIENT);
  await client.discover(1);
  const result = await client.request("tools/call", { name: "slow", arguments: { ms: 50 } }, {
    timeoutMs: 1,
  });
  assertEquals((result as { content: unknown }).content, [{ type: "text", text: "slow done" }]);
  await client.close();
});

Deno.test("memory link: the bridge gets a copy, never an object of the server", async () => {
  const shared = { content: [] as { type: "text"; text: string }[], structuredContent: { n: 1 } };
  const factory = () => {
    const server = new McpServer({ name: "shared", version: "1" });
    server.registerTool("same", {}, () => shared);
    return server;
  };
  await using h = new InProcessBridge([], factory);
  await h.initialize();
  for (const id of ["a", "b"]) {
    const result = (await h.call(id, "same")).at(-1)!.result as { content: unknown[] };
    // The bridge mirrors structuredContent as text in its own copy.
    assertEquals(result.content, [{ type: "text", text: '{"n":1}' }]);
  }
  assertEquals(shared.content.length, 0);
  assertEquals(await h.exit(), 0);
});

Deno.test("memory link: a result that JSON cannot hold fails only its request", async () => {
  const factory = () => {
    const server = new McpServer({ name: "big_int", version: "1" });
    // JSON has no BigInt: the server could not write this result on stdio either.
    server.registerTool("big_int", {}, () => ({ content: [], structuredContent: { n: 1n } }));
    return server;
  };
  const link = await connectMemoryLink(factory);
  const client = new UpstreamClient(link, { ...CLIENT, debug: () => {} });
  await client.discover(1000);
  const failure = await client.request("tools/call", { name: "big_int" }, {}).catch((e) => e);
  assertEquals(failure.kind, "invalid_response");
  const ok = await client.request("tools/list", {}, {});
  assert(Array.isArray((ok as { tools: unknown }).tools));
  await client.close();
});

Deno.test("memory link under the front end: every icon stays, a list change comes before the result", async () => {
  await using h = new InProcessBridge([], buildServer);
  const init = await h.initialize();
  const capabilities = (init.result as { capabilities: Record<string, unknown> }).capabilities;
  assertEquals(capabilities.tools, { listChanged: true });
  await h.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The first acknowledgment of the listen stream gives one event per list.
  const first = [await h.next(), await h.next(), await h.next()].map((m) => m?.method);
  assertEquals(first.sort(), [
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/tools/list_changed",
  ]);
  await h.send({ jsonrpc: "2.0", id: "r", method: "resources/list" });
  const list = (await h.until("r")).at(-1)!.result as { resources: { icons?: unknown }[] };
  assertEquals(list.resources[0]?.icons, [README_ICON]);
  const messages = await h.call("c", "add_tool", { name: "new_one" });
  assertEquals(messages.map((m) => m.method ?? "result"), [
    "notifications/tools/list_changed",
    "result",
  ]);
  assertEquals(await h.exit(), 0);
});

Deno.test("memory link under the front end: a log message of a request reaches the client before its result", async () => {
  await using h = new InProcessBridge([], buildServer);
  await h.initialize();
  await h.send({ jsonrpc: "2.0", id: "l", method: "logging/setLevel", params: { level: "info" } });
  await h.until("l");
  const messages = await h.call("c", "log", { note: "n1" });
  assertEquals(messages[0], {
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", logger: "example", data: { note: "n1" } },
  });
  assertEquals(messages.length, 2);
  assertEquals(await h.exit(), 0);
});

Deno.test("memory link under the front end: a subscribed resource's update comes before the result of the call", async () => {
  await using h = new InProcessBridge([], buildServer);
  await h.initialize();
  await h.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  for (let i = 0; i < 3; i++) assert(await h.next()); // one event per list at the first acknowledgment
  await h.send({
    jsonrpc: "2.0",
    id: "s",
    method: "resources/subscribe",
    params: { uri: "example://readme" },
  });
  assertEquals((await h.until("s")).at(-1)!.result, {});
  const messages = await h.call("t", "touch", { uri: "example://readme" });
  assertEquals(messages[0], {
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri: "example://readme" },
  });
  assertEquals(messages.length, 2);
  assertEquals(await h.exit(), 0);
});

Deno.test("memory link: a bridge that holds its frames holds the server's sends (back pressure)", async () => {
  let sent = 0;
  const factory = () => {
    const server = new McpServer({ name: "flood", version: "1" }, {
      capabilities: { logging: {} },
    });
    server.registerTool("flood", {}, async (ctx) => {
      for (let i = 0; i < 100; i++) {
        await ctx.mcpReq.log("info", { i });
        sent++;
      }
      return { content: [] };
    });
    return server;
  };
  let release!: () => void;
  let held: Promise<void> | undefined = new Promise((resolve) => release = resolve);
  let logs = 0;
  const link = await connectMemoryLink(factory);
  const client = new UpstreamClient(link, {
    ...CLIENT,
    onLogMessage: () => void logs++,
    hold: () => logs > 0 ? held : undefined,
  });
  await client.discover(1000);
  const call = client.request("tools/call", { name: "flood" }, { logLevel: "info" });
  await waitFor("the first message", () => logs > 0 && sent > 0);
  // Nothing more comes while the bridge holds (asserted over 20 ms).
  await new Promise((r) => setTimeout(r, 20));
  // One message went through; the next send of the server waits for the bridge.
  assertEquals([logs, sent], [1, 1]);
  held = undefined;
  release();
  await call;
  assertEquals([logs, sent], [100, 100]);
  await client.close();
});

Deno.test("memory link: a server that closes its end cannot be half closed: what is in flight and each later request fail at once with closed", async () => {
  let server: McpServer | undefined;
  const link = await connectMemoryLink(() => {
    server = new McpServer({ name: "closing", version: "1" });
    server.registerTool("hang", {}, () => new Promise(() => {}));
    return server;
  });
  const client = new UpstreamClient(link, CLIENT);
  await client.discover(1000);
  const inFlight = client.request("tools/call", { name: "hang", arguments: {} }, {}).catch((e) =>
    e
  );
  await waitFor("the server", () => server);
  await server!.close();
  assertEquals((await inFlight).kind, "closed");
  const later = await client.request("tools/list", {}, {}).catch((e) => e);
  assertEquals(later.kind, "closed");
  // The link ends whole: it has no send end of its own.
  assertEquals("sendEnded" in link, false);
  assertEquals(client.cannotSend, false);
  await client.close();
});
