/** The embedded bridge in process: serveStdio with `input` and `output` streams. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { Limits } from "../../lib/bridge/limits.ts";
import { serveStdio, type StdioOptions } from "../../lib/vscode/serve.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { LineSplitter } from "../process/helpers.ts";

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

  /** The next message, or null at the end of the output. */
  async next(): Promise<Obj | null> {
    const { done, value } = await this.#lines.next();
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
    await this.done;
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
