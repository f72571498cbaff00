/**
 * The embedded bridge in process: serveStdio with `input` and `output`
 * streams; then the example program's session in process, with the SDK v2
 * client and raw lines.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Limits } from "../../lib/settings/limits.ts";
import { serveStdio, type StdioOptions } from "../../lib/vscode/serve.ts";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { buildServer, exampleOptions } from "../../scripts/embed_server.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";
import { StreamTransport } from "../stream_transport.ts";

type Obj = Record<string, unknown>;

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "legacy", version: "1" },
};
const enc = new TextEncoder();

/** serveStdio in process: raw writes in, messages out. */
class Embedded {
  readonly done: Promise<void>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;

  constructor(options: Omit<StdioOptions, "input" | "output"> & { limits?: Partial<Limits> } = {}) {
    const input = new TransformStream<Uint8Array, Uint8Array>();
    const output = new TransformStream<Uint8Array, Uint8Array>();
    this.#writer = input.writable.getWriter();
    this.#lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(
      new LineSplitter(),
    )[Symbol.asyncIterator]();
    this.done = serveStdio(buildServer, {
      logLevel: "error",
      ...options,
      input: input.readable,
      output: output.writable,
    });
  }

  raw(text: string | Uint8Array): Promise<void> {
    return this.#writer.write(typeof text === "string" ? enc.encode(text) : text);
  }

  send(message: unknown): Promise<void> {
    return this.raw(JSON.stringify(message) + "\n");
  }

  request(id: unknown, method: string, params?: unknown): Promise<void> {
    return this.send({ jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) });
  }

  /** The next message, or null at the end of the output; a message that never comes fails the test. */
  async next(): Promise<Obj | null> {
    const { done, value } = await within(this.#lines.next(), 10_000, "a message of the bridge");
    return done ? null : JSON.parse(value);
  }

  async untilId(id: unknown): Promise<Obj[]> {
    const out: Obj[] = [];
    for (;;) {
      const message = await this.next();
      if (message === null) throw new Error(`the output ended before the response of ${id}`);
      out.push(message);
      if (message.id === id && !("method" in message)) return out;
    }
  }

  /** Ends the input; gives every message left and waits for serveStdio. */
  async end(): Promise<Obj[]> {
    await this.#writer.close();
    const rest: Obj[] = [];
    for (let m = await this.next(); m !== null; m = await this.next()) rest.push(m);
    await within(this.done, 15_000, "the end of serveStdio");
    return rest;
  }
}

Deno.test("embed: initialize takes the legacy path (the bridge's initialize result)", async () => {
  const e = new Embedded();
  await e.request(1, "initialize", INIT);
  const [result] = await e.untilId(1);
  const r = result!.result as Obj;
  strictEqual(r.protocolVersion, "2025-11-25");
  deepStrictEqual(r.serverInfo, {
    name: "embedded-example",
    version: "1.0.0",
    title: "Embedded example",
  });
  strictEqual(r.instructions, "An example of the embedded bridge.");
  await e.request(2, "tools/call", { name: "echo", arguments: { text: "hi" } });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, { content: [{ type: "text", text: "hi" }] });
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed: a modern request takes the modern path (the SDK's result)", async () => {
  const e = new Embedded();
  await e.request(1, "tools/call", {
    name: "echo",
    arguments: { text: "hi" },
    _meta: ENVELOPE,
  });
  const result = (await e.untilId(1)).at(-1)!.result as Obj;
  strictEqual(result.resultType, "complete");
  deepStrictEqual(result.content, [{ type: "text", text: "hi" }]);
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed: the end of the input before a request writes nothing", async () => {
  const e = new Embedded();
  await e.raw("\n  \r\n");
  deepStrictEqual(await e.end(), []);
});

/** The SDK's answer to a request without the envelope of revision 2026-07-28: the modern path. */
function isModernRejection(message: Obj | undefined): boolean {
  const data = (message?.error as { data?: { supported?: unknown } } | undefined)?.data;
  return Array.isArray(data?.supported) && data.supported.includes("2026-07-28");
}

const modernCall = (id: unknown, name: string, args: Obj = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: ENVELOPE },
});

Deno.test("embed first line: the word initialize in a value does not select the legacy path", async () => {
  const e = new Embedded();
  await e.request(1, "tools/call", { name: "initialize", arguments: {} });
  ok(isModernRejection((await e.untilId(1))[0]));
  await e.request(2, "initialize", INIT);
  ok(isModernRejection((await e.untilId(2))[0]));
  await e.end();
});

for (
  const [label, line, reply] of [
    ["a notification", '{"jsonrpc":"2.0","method":"notifications/initialized"}', undefined],
    ["a response", '{"jsonrpc":"2.0","id":"x","result":{}}', undefined],
    ["invalid JSON", '{"jsonrpc":"2.0","id":4,', { id: 4, code: -32700 }],
    ["a line deeper than the limit", `{"jsonrpc":"2.0","id":5,"params":${"[".repeat(70)}`, {
      id: 5,
      code: -32600,
    }],
    ["JSON that is not JSON-RPC", '{"id":6,"hello":true}', { id: 6, code: -32600 }],
    ["JSON that is not an object", "[1,2]", { id: null, code: -32600 }],
  ] as const
) {
  Deno.test(`embed first line: ${label} selects the modern path`, async () => {
    const e = new Embedded();
    await e.raw(line + "\n");
    await e.request(9, "initialize", INIT);
    const messages = await e.untilId(9);
    if (reply) {
      strictEqual(messages.length, 2);
      strictEqual(messages[0]!.id, reply.id);
      strictEqual((messages[0]!.error as Obj).code, reply.code);
    } else strictEqual(messages.length, 1);
    ok(isModernRejection(messages.at(-1)));
    await e.end();
  });
}

Deno.test("embed first line: invalid UTF-8 gets -32700 and selects the modern path", async () => {
  const e = new Embedded();
  await e.raw(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
  await e.request(9, "initialize", INIT);
  const messages = await e.untilId(9);
  deepStrictEqual((messages[0]!.error as Obj).code, -32700);
  strictEqual(messages[0]!.id, null);
  ok(isModernRejection(messages[1]));
  await e.end();
});

Deno.test("embed first line: blank lines are skipped, a too-long line is dropped without a response", async () => {
  const e = new Embedded({ limits: { max_line_bytes: 200 } });
  await e.raw(`\n \r\n{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"a".repeat(300)}"}\n`);
  await e.request(2, "initialize", INIT);
  const messages = await e.untilId(2);
  strictEqual(messages.length, 1);
  strictEqual((messages[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed first line: the end of the input after a too-long line writes nothing", async () => {
  const e = new Embedded({ limits: { max_line_bytes: 100 } });
  await e.raw("x".repeat(500));
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed first line: two messages in one chunk and a line split across chunks", async () => {
  const e = new Embedded();
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  // ping is answered in every state: its response shows that the second message arrived.
  await e.raw(`${init}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0",`);
  await e.raw('"id":3,"method":"ping"}\n');
  const ids = [(await e.next())!.id, (await e.next())!.id, (await e.next())!.id];
  deepStrictEqual(ids.sort(), [1, 2, 3]);
  await e.end();

  const m = new Embedded();
  const call = JSON.stringify(modernCall(1, "echo", { text: "a" }));
  await m.raw(`${call}\n${JSON.stringify(modernCall(2, "echo", { text: "b" }))}\n`);
  await m.raw(call.slice(0, 10).replace('"id":1', '"id":3'));
  await m.raw(JSON.stringify(modernCall(3, "echo", { text: "c" })).slice(10) + "\n");
  const texts = new Map<unknown, unknown>();
  for (let i = 0; i < 3; i++) {
    const message = (await m.next())!;
    texts.set(message.id, (message.result as { content: { text: string }[] }).content[0]!.text);
  }
  deepStrictEqual(texts, new Map<unknown, unknown>([[1, "a"], [2, "b"], [3, "c"]]));
  await m.end();
});

Deno.test("embed discover rule: refuse answers -32601, then initialize takes the legacy path", async () => {
  const e = new Embedded({ discover: "refuse" });
  await e.request(1, "server/discover", { _meta: ENVELOPE });
  await e.request(2, "server/discover", {});
  const refused = [...await e.untilId(1), ...await e.untilId(2)];
  deepStrictEqual(refused.map((m) => (m.error as Obj).code), [-32601, -32601]);
  await e.request(3, "initialize", INIT);
  strictEqual(((await e.untilId(3))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed discover rule: answer lets the server answer; then initialize or a modern request selects", async () => {
  const e = new Embedded();
  await e.request(1, "server/discover", { _meta: ENVELOPE });
  const discover = (await e.untilId(1))[0]!.result as Obj;
  deepStrictEqual(discover.supportedVersions, ["2026-07-28"]);
  await e.request(2, "initialize", INIT);
  strictEqual(((await e.untilId(2))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();

  const m = new Embedded({ discover: "answer" });
  await m.request(1, "server/discover", { _meta: ENVELOPE });
  await m.untilId(1);
  await m.send(modernCall(2, "echo", { text: "modern" }));
  strictEqual(((await m.untilId(2))[0]!.result as Obj).resultType, "complete");
  await m.end();
});

Deno.test("embed modern path: a too-long line is dropped, a request above the in-flight limit gets -32603 at once", async () => {
  const e = new Embedded({
    limits: { max_line_bytes: 400, max_in_flight_requests: 2, shutdown_grace_ms: 200 },
  });
  await e.send(modernCall("a", "slow", { ms: 5000 }));
  await e.send(modernCall("b", "slow", { ms: 5000 }));
  await e.raw(`{"jsonrpc":"2.0","id":"long","method":"ping","x":"${"a".repeat(500)}"}\n`);
  await e.send(modernCall("c", "echo", { text: "c" }));
  const [refused] = await e.untilId("c");
  deepStrictEqual(refused!.error, {
    code: -32603,
    message: "The connection has too many requests in flight",
    data: { cause: "too_many_requests" },
  });
  // The reader still reads the cancellation; then there is room again.
  await e.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "a", _meta: ENVELOPE },
  });
  await e.send(modernCall("d", "echo", { text: "d" }));
  const [done] = await e.untilId("d");
  strictEqual((done!.result as Obj).resultType, "complete");
  // "a" was canceled, "b" is canceled at the end of the input: neither gets a response.
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed modern path: the end of the input ends the listen stream, waits the grace, cancels the rest", async () => {
  const e = new Embedded({ limits: { shutdown_grace_ms: 300 } });
  await e.send({
    jsonrpc: "2.0",
    id: "listen",
    method: "subscriptions/listen",
    params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE },
  });
  const ack = (await e.next())!;
  strictEqual(ack.method, "notifications/subscriptions/acknowledged");
  await e.send(modernCall("quick", "slow", { ms: 50 }));
  await e.send(modernCall("long", "slow", { ms: 10_000 }));
  const started = Date.now();
  const rest = await e.end();
  const elapsed = Date.now() - started;
  deepStrictEqual(rest.map((m) => m.id), ["listen", "quick"]);
  deepStrictEqual(rest[0]!.result, {
    resultType: "complete",
    _meta: {
      "io.modelcontextprotocol/subscriptionId": "listen",
      "io.modelcontextprotocol/serverInfo": {
        name: "embedded-example",
        version: "1.0.0",
        title: "Embedded example",
      },
    },
  });
  ok(elapsed >= 250 && elapsed < 3000, `the end took ${elapsed} ms`);
  // The slow handler's timer is cleared by its cancel: the test's sanitizer finds no timer.
});

Deno.test("embed legacy path: the end of the input stops as the front end does; no response in flight", async () => {
  const e = new Embedded({ limits: { shutdown_grace_ms: 300 } });
  await e.request(1, "initialize", INIT);
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "slow", arguments: { ms: 10_000 } });
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed legacy path: an input round as a question, a list change before the result", async () => {
  const e = new Embedded();
  await e.request(1, "initialize", { ...INIT, capabilities: { elicitation: { form: {} } } });
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "confirm", arguments: {} });
  const question = (await e.next())!;
  strictEqual(question.method, "elicitation/create");
  strictEqual((question.params as Obj).message, "Go on?");
  await e.send({
    jsonrpc: "2.0",
    id: question.id,
    result: { action: "accept", content: { ok: true } },
  });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, {
    content: [{ type: "text", text: "confirmed" }],
  });
  await e.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  for (let i = 0; i < 3; i++) ok(String((await e.next())!.method).endsWith("/list_changed"));
  await e.request(3, "tools/call", { name: "add_tool", arguments: { name: "x" } });
  deepStrictEqual((await e.untilId(3)).map((m) => m.method ?? m.id), [
    "notifications/tools/list_changed",
    3,
  ]);
  await e.end();
});

Deno.test("embed first line: a UTF-8 byte order mark at the start of the input is skipped", async () => {
  const e = new Embedded();
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await e.raw(new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(init + "\n")]));
  strictEqual(((await e.untilId(1))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed legacy path: the request time limits do not apply over the memory link", async () => {
  const e = new Embedded({
    limits: { long_round_timeout_ms: 20, list_timeout_ms: 20, discover_timeout_ms: 20 },
  });
  await e.request(1, "initialize", INIT);
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "slow", arguments: { ms: 150 } });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, {
    content: [{ type: "text", text: "slow done" }],
  });
  await e.end();
});

// The example program (scripts/embed_server.ts) in the test's process: its own
// serveStdio call (the arguments through exampleOptions) over streams, with the
// SDK v2 client and raw lines. tests/process/embed_test.ts runs the program.

const RAW_ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const RAW_INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
};

/** The example program with `args`, raw lines in and out; the log at its level (info). */
const example = (args: string[] = []) =>
  new Embedded({ logLevel: "info", ...exampleOptions(args) });

/**
 * Takes what goes to the program's stderr until disposed: the bridge's log
 * (a synchronous write to stderr) and the console, which the program sends
 * to stderr.
 */
function captureStderr(): { readonly text: string } & Disposable {
  const stderr = Deno.stderr as unknown as { writeSync: (bytes: Uint8Array) => number };
  const writeSync = stderr.writeSync;
  const con = globalThis.console as unknown as Obj;
  const methods = ["log", "debug", "info", "warn", "error", "trace", "dir", "table"];
  const saved = methods.map((m) => con[m]);
  const dec = new TextDecoder();
  const capture = {
    text: "",
    [Symbol.dispose]() {
      stderr.writeSync = writeSync;
      methods.forEach((m, i) => con[m] = saved[i]);
    },
  };
  stderr.writeSync = (bytes) => {
    capture.text += dec.decode(bytes);
    return bytes.length;
  };
  for (const m of methods) con[m] = (...args: unknown[]) => capture.text += args.join(" ") + "\n";
  return capture;
}

/** stderr has the bridge's own log lines only (no console output). */
function onlyBridgeLines(stderr: string): void {
  for (const line of stderr.split("\n").filter((l) => l !== "")) {
    ok(line.startsWith("[mcp-bridge-vscode] "), line);
  }
}

Deno.test("embedded, SDK v2 client: the modern path (server/discover answered, then the calls)", async () => {
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const serving = serveStdio(buildServer, {
    ...exampleOptions([]),
    input: input.readable,
    output: output.writable,
  });
  // No stderr or pid: the client probes on this connection.
  const transport = new StreamTransport(input.writable, output.readable);
  const client = new ModernClient({ name: "modern", version: "1" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(transport);
  try {
    strictEqual(client.getServerVersion()?.name, "embedded-example");
    const tools = await client.listTools(undefined, { cacheMode: "bypass" });
    // The SDK serves it unchanged: no items added on this path.
    const echo = tools.tools.find((t) => t.name === "echo")!;
    deepStrictEqual((echo.inputSchema.properties as Obj).tags, { type: "array" });
    const result = await client.callTool({ name: "echo", arguments: { text: "modern" } });
    deepStrictEqual(result.content, [{ type: "text", text: "modern" }]);
  } finally {
    await client.close();
    await serving;
  }
});

// "refuse" runs the program in tests/process/embed_test.ts.
Deno.test("embedded, server/discover then initialize (the Copilot harness), discover: answer", async () => {
  using stderr = captureStderr();
  const p = example();
  await p.send({
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: { _meta: RAW_ENVELOPE },
  });
  const [discover] = await p.untilId(1);
  deepStrictEqual((discover!.result as Obj).supportedVersions, ["2026-07-28"]);
  await p.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: RAW_INIT });
  const [init] = await p.untilId(2);
  strictEqual((init!.result as Obj).protocolVersion, "2025-11-25");
  await p.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
  ok(((await p.untilId(3)).at(-1)!.result as { tools: unknown[] }).tools.length > 0);
  // end(): the output ends and serveStdio resolves (the program exits with 0).
  deepStrictEqual(await p.end(), []);
  onlyBridgeLines(stderr.text);
});

const modernLine = (id: number, text: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text }, _meta: RAW_ENVELOPE },
  });
const initLine = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: RAW_INIT });

/** Each row of the first-line table: the raw first lines, the answers before the probe, the path. */
const ROWS: {
  name: string;
  chunks: (string | Uint8Array)[];
  before: { id: unknown; code: number }[];
  path: "legacy" | "modern";
}[] = [
  { name: "initialize", chunks: [initLine(9) + "\n"], before: [], path: "legacy" },
  {
    name: "the word initialize in a value",
    chunks: ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"initialize"}}\n'],
    before: [{ id: 1, code: -32022 }],
    path: "modern",
  },
  {
    name: "server/discover without the envelope (the server answers it: -32022), then initialize",
    chunks: ['{"jsonrpc":"2.0","id":1,"method":"server/discover"}\n'],
    before: [{ id: 1, code: -32022 }],
    path: "legacy",
  },
  {
    name: "another request",
    chunks: [modernLine(1, "a") + "\n"],
    before: [{ id: 1, code: 0 }],
    path: "modern",
  },
  {
    name: "a notification",
    chunks: ['{"jsonrpc":"2.0","method":"notifications/initialized"}\n'],
    before: [],
    path: "modern",
  },
  {
    name: "a response",
    chunks: ['{"jsonrpc":"2.0","id":7,"result":{}}\n'],
    before: [],
    path: "modern",
  },
  {
    name: "invalid JSON",
    chunks: ['{"jsonrpc":"2.0","id":1,\n'],
    before: [{ id: 1, code: -32700 }],
    path: "modern",
  },
  {
    name: "a line deeper than the limit",
    chunks: [`{"id":1,"x":${"[".repeat(100)}${"]".repeat(100)}}\n`],
    before: [{ id: 1, code: -32600 }],
    path: "modern",
  },
  {
    name: "JSON that is not JSON-RPC",
    chunks: ['{"id":1,"x":true}\n'],
    before: [{ id: 1, code: -32600 }],
    path: "modern",
  },
  {
    name: "invalid UTF-8",
    chunks: [new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a])],
    before: [{ id: null, code: -32700 }],
    path: "modern",
  },
  { name: "blank lines", chunks: ["\n \r\n\t\n", initLine(9) + "\n"], before: [], path: "legacy" },
  {
    name: "two messages in one chunk",
    chunks: [`${modernLine(1, "a")}\n${modernLine(2, "b")}\n`],
    before: [{ id: 1, code: 0 }, { id: 2, code: 0 }],
    path: "modern",
  },
  {
    name: "a line split across chunks",
    chunks: [initLine(9).slice(0, 20), initLine(9).slice(20) + "\n"],
    before: [],
    path: "legacy",
  },
];

/** Runs one row on its own connection. */
async function runRow(row: typeof ROWS[number]): Promise<void> {
  const p = example();
  for (const chunk of row.chunks) await p.raw(chunk);
  for (const expected of row.before) {
    const message = (await p.untilId(expected.id)).at(-1)!;
    if (expected.code === 0) strictEqual((message.result as Obj).resultType, "complete");
    else strictEqual((message.error as Obj).code, expected.code);
  }
  // Which path has the connection: initialize gets the bridge's result, or the SDK's refusal.
  if (!row.chunks.some((c) => typeof c === "string" && c.includes('"initialize","params"'))) {
    await p.raw(initLine(9) + "\n");
  }
  const answer = (await p.untilId(9)).at(-1)!;
  if (row.path === "legacy") strictEqual((answer.result as Obj).protocolVersion, "2025-11-25");
  else ok(isModernRejection(answer), JSON.stringify(answer));
  deepStrictEqual(await p.end(), []);
}

Deno.test("embedded, raw lines: each row of the first-line table", async (t) => {
  for (const row of ROWS) await t.step(row.name, () => runRow(row));
});

Deno.test("embedded, raw lines: a too-long first line is dropped; the end of the input before a request writes nothing", async () => {
  using stderr = captureStderr();
  const p = example();
  await p.raw(`{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"a".repeat(65 * 1024 * 1024)}"}\n`);
  await p.raw("\n");
  deepStrictEqual(await p.end(), []);
  onlyBridgeLines(stderr.text);
});

Deno.test("embedded, the order rule: 1,000 calls, the list change of each call before its result", async () => {
  const p = example();
  await p.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: RAW_INIT });
  await p.untilId(0);
  await p.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  // The first acknowledgment of the listen stream gives one event per list.
  for (let i = 0; i < 3; i++) ok(String((await p.next())!.method).endsWith("/list_changed"));
  for (let i = 1; i <= 1000; i++) {
    await p.send({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "add_tool", arguments: { name: `t${i}` } },
    });
    const messages = await p.untilId(i);
    deepStrictEqual(
      messages.map((m) => m.method ?? m.id),
      ["notifications/tools/list_changed", i],
      `call ${i}`,
    );
  }
  deepStrictEqual(await p.end(), []);
});

Deno.test("embedded, the end of the input on the legacy path: requests in flight get no response", async () => {
  const p = example(["--shutdown-grace-ms", "300"]);
  await p.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: RAW_INIT });
  await p.untilId(1);
  await p.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 60_000 } },
  });
  await p.send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 60_000 } },
  });
  const started = Date.now();
  deepStrictEqual(await p.end(), []);
  // serveStdio resolved, and the sanitizer finds no timer of the slow calls left.
  ok(Date.now() - started < 5000, "the process stops without waiting for the requests");
});

Deno.test("embedded, the end of the input on the modern path: the listen stream ends, the grace, then the cancel", async () => {
  const p = example(["--shutdown-grace-ms", "500"]);
  await p.send({
    jsonrpc: "2.0",
    id: "listen",
    method: "subscriptions/listen",
    params: { notifications: { toolsListChanged: true }, _meta: RAW_ENVELOPE },
  });
  strictEqual((await p.next())!.method, "notifications/subscriptions/acknowledged");
  const slow = (id: string, ms: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "slow", arguments: { ms }, _meta: RAW_ENVELOPE },
  });
  await p.send(slow("within", 100));
  await p.send(slow("beyond", 60_000));
  const started = Date.now();
  const rest = await p.end();
  const elapsed = Date.now() - started;
  deepStrictEqual(rest.map((m) => m.id), ["listen", "within"]);
  strictEqual((rest[1]!.result as { content: { text: string }[] }).content[0]!.text, "slow done");
  ok(elapsed >= 400 && elapsed < 5000, `the end took ${elapsed} ms`);
});
