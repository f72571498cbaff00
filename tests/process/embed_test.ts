/**
 * The example server of the embedded bridge as a real process
 * (`scripts/embed_server.ts`, which imports the `./embed` export): the v1
 * SDK client on the legacy path as VS Code runs it, and a raw session with a
 * flag of the program up to the end of the input (the exit code, stderr).
 * The rest of its session runs in process: tests/embed/embed_test.ts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
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

// The program with a flag, to the end of its input: the exit code and stderr. The option
// "answer" runs in process (tests/embed/embed_test.ts).
Deno.test("embedded, server/discover then initialize (the Copilot harness), discover: refuse", async () => {
  await using p = new EmbedProcess(["--refuse-discover"]);
  await p.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } });
  const [discover] = await p.untilId(1);
  strictEqual((discover!.error as Obj).code, -32601);
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

/** stderr has the bridge's own log lines only (no Deno warning, no console output). */
function onlyBridgeLines(stderr: string): void {
  for (const line of stderr.split("\n").filter((l) => l !== "")) {
    ok(line.startsWith("[mcp-bridge-vscode] "), line);
  }
}
