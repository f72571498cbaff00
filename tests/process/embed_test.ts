/**
 * The example server of the embedded bridge as a real process
 * (`scripts/embed_server.ts`, which imports the `./embed` export): the v1
 * SDK client on the legacy path, the SDK v2 client on the modern path, raw
 * lines for the first-line table, the order of events and results, and the
 * end of the input.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { DENO, LineSplitter, ROOT } from "./helpers.ts";

type Obj = Record<string, unknown>;

const SERVER_ARGS = ["run", "-q", "-P", `${ROOT}scripts/embed_server.ts`];
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
};
const enc = new TextEncoder();

/** The example server as a child, with raw access to its stdio. */
class EmbedProcess implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  stderr = "";
  readonly #stderrDone: Promise<void>;

  constructor(args: string[] = []) {
    this.child = new Deno.Command(DENO, {
      args: [...SERVER_ARGS, ...args],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#lines = this.child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new LineSplitter(),
    )[Symbol.asyncIterator]();
    const stderr = this.child.stderr.pipeThrough(new TextDecoderStream());
    this.#stderrDone = (async () => {
      for await (const text of stderr) this.stderr += text;
    })();
  }

  raw(text: string | Uint8Array): Promise<void> {
    return this.#writer.write(typeof text === "string" ? enc.encode(text) : text);
  }

  send(message: unknown): Promise<void> {
    return this.raw(JSON.stringify(message) + "\n");
  }

  /** The next message, or null at the end of the output or after `ms`. */
  async next(ms = 10_000): Promise<Obj | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
    const next = await Promise.race([this.#lines.next(), timeout]);
    clearTimeout(timer);
    if (next === "timeout" || next.done) return null;
    return JSON.parse(next.value);
  }

  async untilId(id: unknown): Promise<Obj[]> {
    const out: Obj[] = [];
    for (;;) {
      const message = await this.next();
      if (message === null) throw new Error(`no response for ${id}; stderr: ${this.stderr}`);
      out.push(message);
      if (message.id === id && !("method" in message)) return out;
    }
  }

  /** Closes stdin; gives the messages left and the exit code. */
  async end(): Promise<{ rest: Obj[]; code: number }> {
    await this.#writer.close();
    const rest: Obj[] = [];
    for (let m = await this.next(); m !== null; m = await this.next()) rest.push(m);
    const { code } = await this.child.status;
    await this.#stderrDone;
    return { rest, code };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.child.kill("SIGKILL");
    } catch {
      // it stopped
    }
    await this.child.status;
    await this.#writer.close().catch(() => {});
    await this.#stderrDone;
  }
}

Deno.test("embedded, v1 client (the VS Code side): every forwarded method, an input round, a list change", async () => {
  const transport = new StdioClientTransport({
    command: DENO,
    args: SERVER_ARGS,
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "vscode-like", version: "1" }, {
    capabilities: { elicitation: { form: {} } },
  });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
  const logs: unknown[] = [];
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n: { params: unknown }) => void logs.push(n.params),
  );
  client.setRequestHandler(ElicitRequestSchema, (request: { params: Obj }) => {
    strictEqual(request.params.message, "Go on?");
    return { action: "accept", content: { ok: true } };
  });
  await client.connect(transport);
  try {
    deepStrictEqual(client.getServerVersion(), {
      name: "embedded-example",
      version: "1.0.0",
      title: "Embedded example",
    });
    await client.ping();
    await client.setLoggingLevel("info");
    const tools = await client.listTools();
    const echo = tools.tools.find((t: { name: string }) => t.name === "echo")!;
    // R6: the array schema without items gets one.
    deepStrictEqual((echo.inputSchema.properties as Obj).tags, { type: "array", items: {} });
    deepStrictEqual(
      (await client.callTool({ name: "echo", arguments: { text: "hi" } })).content,
      [{ type: "text", text: "hi" }],
    );
    strictEqual((await client.listPrompts()).prompts[0]?.name, "greet");
    strictEqual((await client.getPrompt({ name: "greet" })).messages.length, 1);
    const resources = await client.listResources();
    strictEqual(resources.resources[0]?.uri, "example://readme");
    ok(resources.resources[0]?.icons?.length === 1, "every icon stays (not remote)");
    deepStrictEqual((await client.readResource({ uri: "example://readme" })).contents, [{
      uri: "example://readme",
      text: "readme text",
    }]);
    strictEqual(
      (await client.listResourceTemplates()).resourceTemplates[0]?.uriTemplate,
      "example://notes/{id}",
    );
    deepStrictEqual(
      (await client.complete({
        ref: { type: "ref/resource", uri: "example://notes/{id}" },
        argument: { name: "id", value: "1" },
      })).completion.values,
      ["10", "11"],
    );
    await client.callTool({ name: "log", arguments: { note: "n" } });
    deepStrictEqual(logs, [{ level: "info", logger: "example", data: { note: "n" } }]);
    await client.subscribeResource({ uri: "example://readme" });
    await client.unsubscribeResource({ uri: "example://readme" });
    deepStrictEqual((await client.callTool({ name: "confirm", arguments: {} })).content, [{
      type: "text",
      text: "confirmed",
    }]);
    const before = changes;
    await client.callTool({ name: "add_tool", arguments: { name: "fresh" } });
    // The order rule of M5: the list change came before the result.
    strictEqual(changes, before + 1);
    ok((await client.listTools()).tools.some((t: { name: string }) => t.name === "fresh"));
  } finally {
    await client.close();
  }
});

Deno.test("embedded, SDK v2 client: the modern path (server/discover answered, then the calls)", async () => {
  // A subclass probes on its own connection: no second process.
  class InPlace extends ModernStdioTransport {}
  const transport = new InPlace({ command: DENO, args: SERVER_ARGS, cwd: ROOT, stderr: "pipe" });
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
  }
});

for (const option of ["answer", "refuse"] as const) {
  Deno.test(`embedded, server/discover then initialize (the Copilot harness), discover: ${option}`, async () => {
    await using p = new EmbedProcess(option === "refuse" ? ["--refuse-discover"] : []);
    await p.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } });
    const [discover] = await p.untilId(1);
    if (option === "refuse") {
      strictEqual((discover!.error as Obj).code, -32601);
    } else {
      deepStrictEqual((discover!.result as Obj).supportedVersions, ["2026-07-28"]);
    }
    await p.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: INIT });
    const [init] = await p.untilId(2);
    strictEqual((init!.result as Obj).protocolVersion, "2025-11-25");
    await p.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    ok(((await p.untilId(3)).at(-1)!.result as { tools: unknown[] }).tools.length > 0);
    const { rest, code } = await p.end();
    deepStrictEqual(rest, []);
    strictEqual(code, 0);
    onlyBridgeLines(p.stderr);
  });
}

/** stderr has the bridge's own log lines only (no Deno warning, no console output). */
function onlyBridgeLines(stderr: string): void {
  for (const line of stderr.split("\n").filter((l) => l !== "")) {
    ok(line.startsWith("[mcp-bridge-vscode] "), line);
  }
}

/** The SDK's answer to a request without the envelope: the modern path took the connection. */
function isModernRejection(message: Obj | undefined): boolean {
  const data = (message?.error as { data?: { supported?: unknown } } | undefined)?.data;
  return Array.isArray(data?.supported) && data.supported.includes("2026-07-28");
}

const modernLine = (id: number, text: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text }, _meta: ENVELOPE },
  });
const initLine = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: INIT });

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

/** Runs one row in its own process. */
async function runRow(row: typeof ROWS[number]): Promise<void> {
  await using p = new EmbedProcess();
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
  const { rest, code } = await p.end();
  deepStrictEqual(rest, []);
  strictEqual(code, 0);
}

Deno.test("embedded, raw lines: each row of the first-line table", async (t) => {
  for (const row of ROWS) await t.step(row.name, () => runRow(row));
});

Deno.test("embedded, raw lines: a too-long first line is dropped; the end of the input before a request writes nothing", async () => {
  await using p = new EmbedProcess();
  await p.raw(`{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"a".repeat(65 * 1024 * 1024)}"}\n`);
  await p.raw("\n");
  const { rest, code } = await p.end();
  deepStrictEqual(rest, []);
  strictEqual(code, 0);
  onlyBridgeLines(p.stderr);
});

Deno.test("embedded, the order rule: 1,000 calls, the list change of each call before its result", async () => {
  await using p = new EmbedProcess();
  await p.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: INIT });
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
  const { rest, code } = await p.end();
  deepStrictEqual(rest, []);
  strictEqual(code, 0);
});

Deno.test("embedded, the end of the input on the legacy path: requests in flight get no response", async () => {
  await using p = new EmbedProcess(["--shutdown-grace-ms", "300"]);
  await p.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
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
  const { rest, code } = await p.end();
  deepStrictEqual(rest, []);
  strictEqual(code, 0);
  ok(Date.now() - started < 5000, "the process stops without waiting for the requests");
});

Deno.test("embedded, the end of the input on the modern path: the listen stream ends, the grace, then the cancel", async () => {
  await using p = new EmbedProcess(["--shutdown-grace-ms", "500"]);
  await p.send({
    jsonrpc: "2.0",
    id: "listen",
    method: "subscriptions/listen",
    params: { notifications: { toolsListChanged: true }, _meta: ENVELOPE },
  });
  strictEqual((await p.next())!.method, "notifications/subscriptions/acknowledged");
  const slow = (id: string, ms: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "slow", arguments: { ms }, _meta: ENVELOPE },
  });
  await p.send(slow("within", 100));
  await p.send(slow("beyond", 60_000));
  const started = Date.now();
  const { rest, code } = await p.end();
  const elapsed = Date.now() - started;
  deepStrictEqual(rest.map((m) => m.id), ["listen", "within"]);
  strictEqual((rest[1]!.result as { content: { text: string }[] }).content[0]!.text, "slow done");
  strictEqual(code, 0);
  ok(elapsed >= 400 && elapsed < 5000, `the end took ${elapsed} ms`);
});
