/**
 * serveStdio (lib/vscode/serve.ts) in process for the tests of the embedded
 * bridge: raw writes in, messages out; the envelope and the initialize of
 * the tests, and the sign of the modern path.
 */

import type { Limits } from "../../lib/settings/limits.ts";
import { serveStdio, type StdioOptions } from "../../lib/vscode/serve.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";

/** A JSON object of the output. */
export type Obj = Record<string, unknown>;

/** The `_meta` envelope of revision 2026-07-28 of the tests' modern client. */
export const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
/** The params of the tests' initialize (revision 2025-11-25). */
export const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "legacy", version: "1" },
};

const enc = new TextEncoder();

/** serveStdio in process: raw writes in, messages out. */
export class Embedded {
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

/** The SDK's answer to a request without the envelope of revision 2026-07-28: the modern path. */
export function isModernRejection(message: Obj | undefined): boolean {
  const data = (message?.error as { data?: { supported?: unknown } } | undefined)?.data;
  return Array.isArray(data?.supported) && data.supported.includes("2026-07-28");
}

/** A tools/call of revision 2026-07-28. */
export const modernCall = (id: unknown, name: string, args: Obj = {}): Obj => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, _meta: ENVELOPE },
});
