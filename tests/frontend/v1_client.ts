/**
 * The v1 SDK client (`@modelcontextprotocol/sdk`, as VS Code runs it) in
 * front of the bridge in the test's own process: a Transport over the
 * messages of an {@linkcode InProcessBridge}, in place of the stdio
 * transport of `connectV1` (tests/process/helpers.ts) that starts the
 * bridge as a child. The messages are framed and read as the stdio transport
 * of the SDK does (`serializeMessage`, `deserializeMessage`).
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { InProcessBridge, type Upstream } from "./in_process.ts";

/**
 * How long the transport waits for the next message of the bridge before it
 * takes the output for ended: longer than any test, so in practice the
 * output ends only when the bridge stops.
 */
const READ_LIMIT_MS = 24 * 60 * 60 * 1000;

/**
 * A Transport of the v1 SDK to the bridge of `options` (command line flags)
 * in front of `upstream`, in this process. `start` starts the bridge; `close`
 * ends its input and waits until it stopped (and its upstream with it).
 */
export class InProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  #bridge: InProcessBridge | undefined;
  #reading: Promise<void> | undefined;

  constructor(readonly upstream: Upstream, readonly options: string[] = []) {}

  /** The bridge, once started (its `stderr` holds the log lines). */
  get bridge(): InProcessBridge {
    if (!this.#bridge) throw new Error("the transport did not start");
    return this.#bridge;
  }

  start(): Promise<void> {
    if (this.#bridge) throw new Error("the transport started already");
    this.#bridge = new InProcessBridge(this.options, this.upstream);
    this.#reading = this.#read(this.#bridge);
    return Promise.resolve();
  }

  async #read(bridge: InProcessBridge): Promise<void> {
    for (;;) {
      const message = await bridge.next(READ_LIMIT_MS);
      if (message === null) break;
      let parsed: JSONRPCMessage;
      try {
        parsed = deserializeMessage(JSON.stringify(message));
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      this.onmessage?.(parsed);
    }
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.bridge.writeRaw(serializeMessage(message));
  }

  async close(): Promise<void> {
    const bridge = this.#bridge;
    if (!bridge) return;
    await bridge[Symbol.asyncDispose]();
    await this.#reading;
  }
}

/**
 * The in-process counterpart of the transport of `connectV1` of
 * tests/process/helpers.ts: no child for the bridge.
 */
export function inProcessTransport(
  upstream: Upstream,
  options: string[] = [],
): InProcessTransport {
  return new InProcessTransport(upstream, options);
}
