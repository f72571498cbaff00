/**
 * serveStdio, the embedded bridge's entry for VS Code: the example program
 * (scripts/embed_server.ts) in the test's process, its own serveStdio call
 * (the arguments through exampleOptions) over streams, with the SDK v2
 * client and raw lines: the default discover rule, the first-line table,
 * the log on stderr only, the order rule, the end of the input on each path.
 * tests/process/embed_test.ts runs the program.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { serveStdio } from "../../lib/vscode/serve.ts";
import { buildServer, exampleOptions } from "../../scripts/embed_server.ts";
import { Embedded, isModernRejection, type Obj } from "../embed/embedded.ts";
import { StreamTransport } from "../stream_transport.ts";

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
