/**
 * `--protocol auto` in front of `@modelcontextprotocol/server-everything`
 * (revision 2025-11-25 only), over stdio and over its Streamable HTTP mode:
 * the v1 SDK client gets through the bridge what it gets from the server
 * directly. Each difference is one that LEGACY.md names, and is asserted.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { waitFor } from "../wait.ts";
import {
  bridged,
  direct,
  directHttp,
  everythingHttp,
  nodeServer,
  type Recorder,
  SAMPLING_RESULT,
} from "./passthrough_helpers.ts";

interface Side {
  readonly client: Client;
  readonly recorder: Recorder;
}

type Json = Record<string, unknown>;

/** Every page of a list. */
async function all(client: Client, method: string, key: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await client[method as "listTools"](cursor ? { cursor } : undefined) as Json;
    items.push(...(page[key] as unknown[]));
    cursor = page.nextCursor as string | undefined;
  } while (cursor);
  return items;
}

/** The arguments of each tool of server-everything 2026.8.31 (every tool it lists). */
const TOOL_ARGS: Record<string, Json> = {
  "echo": { message: "hello" },
  "get-annotated-message": { messageType: "error", includeImage: true },
  "get-env": {},
  "get-resource-links": { count: 3 },
  "get-resource-reference": { resourceType: "Text", resourceId: 2 },
  "get-structured-content": { location: "Chicago" },
  "get-sum": { a: 2, b: 40 },
  "get-tiny-image": {},
  "gzip-file-as-resource": { name: "a.gz", data: "data:text/plain;base64,aGVsbG8=" },
  "trigger-long-running-operation": { duration: 0.3, steps: 3 },
  "get-roots-list": {},
  "trigger-elicitation-request": {},
  "trigger-url-elicitation": { url: "https://example.com/consent", elicitationId: "e-1" },
  "trigger-sampling-request": { prompt: "Say hi", maxTokens: 10 },
  // Needs a task (taskSupport required); the bridge declares no tasks, so its error is the same.
  "simulate-research-query": { topic: "bridges" },
  // Called below, with resources/subscribe and logging/setLevel (each call toggles).
  "toggle-simulated-logging": {},
  "toggle-subscriber-updates": {},
};

/** The outcome of a call: its result, or the code and message of its error. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    const { code, message } = error as { code?: number; message: string };
    return { error: { code, message } };
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** A time of day, as the server writes into the texts it makes ("created at 5:03:51 PM"). */
const TIME_OF_DAY = /\b\d{1,2}:\d\d:\d\d(?: [AP]M)?\b/g;

/** Runs each case on both sides at the same time and compares. */
async function same(d: Side, b: Side, what: string, run: (c: Client) => Promise<unknown>) {
  const [x, y] = await Promise.all([outcome(() => run(d.client)), outcome(() => run(b.client))]);
  // Over HTTP each client has its own session, whose id some texts name; and the two reads
  // can fall on either side of a second.
  const bare = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value).replaceAll(UUID, "<session>").replaceAll(TIME_OF_DAY, "<time>"),
    );
  deepStrictEqual(bare(y), bare(x), `${what}: the bridged result differs from the direct one`);
  return y;
}

/** Progress values of a long-running call, and a cancel after `cancelAt` of them. */
async function longRun(c: Client, steps: number, cancelAt?: number) {
  const progress: number[] = [];
  const controller = new AbortController();
  const run = c.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: steps * 0.05, steps } },
    undefined,
    {
      signal: controller.signal,
      onprogress: (p: { progress: number }) => {
        progress.push(p.progress);
        if (progress.length === cancelAt) controller.abort("the test canceled it");
      },
    },
  );
  const result = await outcome(() => run);
  return { progress, result };
}

async function exercise(d: Side, b: Side): Promise<void> {
  // initialize: the same serverInfo and instructions; capabilities less tasks.
  deepStrictEqual(b.client.getServerVersion(), d.client.getServerVersion());
  strictEqual(b.client.getInstructions(), d.client.getInstructions());
  const { tasks, ...rest } = d.client.getServerCapabilities() as Json;
  ok(tasks, "server-everything declares tasks directly");
  deepStrictEqual(b.client.getServerCapabilities(), rest);

  // The lists: equal (no schema of server-everything needs a repair).
  const tools = await same(d, b, "tools/list", (c) => all(c, "listTools", "tools")) as Json[];
  await same(d, b, "prompts/list", (c) => all(c, "listPrompts", "prompts"));
  const resources = await same(
    d,
    b,
    "resources/list",
    (c) => all(c, "listResources", "resources"),
  ) as Json[];
  await same(
    d,
    b,
    "resources/templates/list",
    (c) => all(c, "listResourceTemplates", "resourceTemplates"),
  );

  // Every tool, with valid arguments.
  deepStrictEqual(tools.map((t) => t.name).sort(), Object.keys(TOOL_ARGS).sort());
  for (const tool of tools) {
    const name = tool.name as string;
    if (name.startsWith("toggle-")) continue;
    await same(d, b, `tools/call ${name}`, (c) => c.callTool({ name, arguments: TOOL_ARGS[name] }));
  }
  // The URL elicitation of the error path: -32042 reaches the client unchanged.
  const urlError = await same(d, b, "tools/call -32042", (c) =>
    c.callTool({
      name: "trigger-url-elicitation",
      arguments: { url: "https://example.com/other", elicitationId: "e-2", errorPath: true },
    })) as { error: { code: number } };
  strictEqual(urlError.error.code, -32042);
  // The server's requests reached the client's handlers under bridge ids, the answers came back.
  for (const method of ["sampling/createMessage", "elicitation/create", "roots/list"]) {
    await waitFor(
      `${method} through the bridge`,
      () => b.recorder.requests.some((r) => r.method === method),
    );
  }
  ok(
    JSON.stringify(
      await b.client.callTool({
        name: "trigger-sampling-request",
        arguments: { prompt: "x", maxTokens: 5 },
      }),
    ).includes(SAMPLING_RESULT.content.text),
  );

  // Prompts, resources and completion.
  await same(d, b, "prompts/get", (c) => c.getPrompt({ name: "simple-prompt" }));
  await same(
    d,
    b,
    "prompts/get with arguments",
    (c) => c.getPrompt({ name: "args-prompt", arguments: { city: "Paris", state: "IDF" } }),
  );
  for (const resource of resources.slice(0, 3)) {
    await same(d, b, `resources/read`, (c) => c.readResource({ uri: resource.uri as string }));
  }
  await same(
    d,
    b,
    "resources/read of a template",
    (c) => c.readResource({ uri: "demo://resource/dynamic/text/7" }),
  );
  const completion = await same(d, b, "completion/complete", (c) =>
    c.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "E" },
    })) as { completion: { values: string[] } };
  ok(completion.completion.values.length > 0);

  // Progress arrives, under the client's token. (The v1 client handles a notification a
  // turn later than a response: the last progress, just before the result, can be lost
  // on either side, so only the first three are compared.)
  const [dRun, bRun] = await Promise.all([longRun(d.client, 4), longRun(b.client, 4)]);
  deepStrictEqual(bRun.progress.slice(0, 3), [1, 2, 3]);
  deepStrictEqual(dRun.progress.slice(0, 3), [1, 2, 3]);
  deepStrictEqual(bRun.result, dRun.result);

  // A cancellation: the server sends progress after it; the bridge drops it.
  const before = { d: d.recorder.errors.length, b: b.recorder.errors.length };
  const [dCancel, bCancel] = await Promise.all([
    longRun(d.client, 16, 2),
    longRun(b.client, 16, 2),
  ]);
  deepStrictEqual(bCancel.progress, [1, 2]);
  deepStrictEqual(dCancel.progress, [1, 2]);
  // Directly, the SDK client reports the later progress of the canceled call.
  const late = (r: Recorder, from: number) =>
    r.errors.slice(from).filter((e) => e.includes("unknown token"));
  await waitFor("late progress of the server, directly", () => late(d.recorder, before.d).length);
  // The bridge sends none of it (asserted over 50 ms after the direct client had it).
  await new Promise((resolve) => setTimeout(resolve, 50));
  deepStrictEqual(late(b.recorder, before.b), []);

  // resources/subscribe, then updates.
  const uri = resources[0]!.uri as string;
  await same(d, b, "resources/subscribe", (c) => c.subscribeResource({ uri }));
  await same(
    d,
    b,
    "toggle-subscriber-updates",
    (c) => c.callTool({ name: "toggle-subscriber-updates", arguments: {} }),
  );
  for (const side of [d, b]) {
    await waitFor(
      "notifications/resources/updated",
      () => side.recorder.of("notifications/resources/updated").some((p) => p.uri === uri),
    );
  }

  // logging/setLevel goes upstream, then log messages arrive.
  await same(d, b, "logging/setLevel", (c) => c.setLoggingLevel("debug"));
  await same(
    d,
    b,
    "toggle-simulated-logging",
    (c) => c.callTool({ name: "toggle-simulated-logging", arguments: {} }),
  );
  for (const side of [d, b]) {
    const message = await waitFor(
      "a simulated notifications/message",
      () =>
        // "Alert level-message" is the server's own spelling.
        side.recorder.of("notifications/message").find((m) => /level[- ]message/.test(`${m.data}`)),
      { timeoutMs: 12_000 },
    );
    ok(typeof message.level === "string", JSON.stringify(message));
  }
  // Stop the periodic updates before the close.
  for (const name of ["toggle-subscriber-updates", "toggle-simulated-logging"]) {
    await same(d, b, name, (c) => c.callTool({ name, arguments: {} }));
  }
}

Deno.test("pass-through: server-everything 2026.8.31 over stdio gives the client its own results", async () => {
  const server = nodeServer("everything", "stdio");
  const [d, b] = await Promise.all([direct(server), bridged(["--", ...server])]);
  try {
    await exercise(d, b);
    await b.client.close();
    const log = b.stderr();
    ok(log.includes("info: revision 2025-11-25"), log);
  } finally {
    await d.client.close();
    await b.client.close();
  }
});

Deno.test("pass-through: server-everything 2026.8.31 over Streamable HTTP (sessions, GET stream)", async () => {
  await using server = await everythingHttp();
  const [d, b] = await Promise.all([directHttp(server.url), bridged([server.url])]);
  try {
    await exercise(d, b);
  } finally {
    await d.client.close();
    await b.client.close();
  }
});
