/**
 * The v1 SDK client (`@modelcontextprotocol/sdk`, as VS Code runs it) in
 * front of the bridge in the test's own process: the transport of the SDK
 * over the streams of `startInProcess`, in place of the stdio transport of
 * `connectV1` (tests/process/helpers.ts) that starts the bridge as a child.
 *
 * @module
 */

import { StreamTransport } from "../stream_transport.ts";
import { within } from "../wait.ts";
import { startInProcess, type Upstream } from "./in_process.ts";

/** How long the bridge may take to end after its input ends (its child's grace included). */
const STOP_LIMIT_MS = 15_000;

/**
 * A transport of the v1 SDK to the bridge of `options` (command line flags)
 * in front of `upstream`, in this process; the bridge starts at once.
 * `close` ends its input and waits until it stopped (and its upstream with it).
 */
export class InProcessTransport extends StreamTransport {
  readonly #exitCode: Promise<number>;

  constructor(upstream: Upstream, options: string[] = []) {
    const started = startInProcess(options, upstream);
    super(started.input, started.output);
    this.#exitCode = started.exitCode;
  }

  override async close(): Promise<void> {
    await super.close();
    await within(this.#exitCode, STOP_LIMIT_MS, "the end of the bridge");
  }
}

/**
 * The in-process counterpart of the transport of `connectV1` of
 * tests/process/helpers.ts: no child for the bridge.
 */
export function inProcessTransport(upstream: Upstream, options: string[] = []): InProcessTransport {
  return new InProcessTransport(upstream, options);
}
