/**
 * A client transport of the SDKs (v1 and v2) over a server's byte streams
 * (the streams of `serveStdio`, or of the bridge in the test's process): one
 * JSON line a message, written and read as the v1 SDK's stdio transport does
 * over a child's stdin and stdout (`serializeMessage`, `deserializeMessage`:
 * a line that is not a JSON-RPC message goes to `onerror`, and reading goes
 * on). It has no `stderr` and `pid`, so the SDK v2 client probes on this
 * connection (no sibling process).
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "./process/helpers.ts";
import { within } from "./wait.ts";

const enc = new TextEncoder();

/** How long `close` waits for the end of the server's output. */
const CLOSE_LIMIT_MS = 15_000;

/** The client's end of one stdio connection served in the test's process. */
export class StreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #output: ReadableStream<Uint8Array>;
  #reading: Promise<void> = Promise.resolve();

  /** `input`: the server's input (the client writes); `output`: the server's output (the client reads). */
  constructor(input: WritableStream<Uint8Array>, output: ReadableStream<Uint8Array>) {
    this.#writer = input.getWriter();
    this.#output = output;
  }

  start(): Promise<void> {
    const lines = this.#output.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter());
    this.#reading = (async () => {
      try {
        for await (const line of lines) {
          let message: JSONRPCMessage;
          try {
            message = deserializeMessage(line);
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          this.onmessage?.(message);
        }
      } catch (error) {
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
      this.onclose?.();
    })();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#writer.write(enc.encode(serializeMessage(message)));
  }

  /** Ends the server's input (the end of stdin) and waits for the end of its output. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await within(this.#reading, CLOSE_LIMIT_MS, "the end of the server's output");
  }
}
