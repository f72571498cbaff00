/**
 * The listening socket of `serve`, kept up when the process runs out of file
 * descriptors: `Deno.serve` ends its accept loop on `EMFILE` (or `ENFILE`)
 * and rejects `finished` (unobserved, that rejection kills the process with
 * every session). Here that end is logged (a warning at most once a minute)
 * and the same host and port listen again after a short wait, with the same
 * handler: the sessions live in the handler, not in the socket, so they all
 * go on. Any other end of the accept loop is not ours to hide: `failed`
 * rejects with it.
 *
 * @module
 */

import type { Logger } from "../log.ts";

/** How long it waits before it listens again (the clients that hold descriptors go meanwhile). */
export const RELISTEN_DELAY_MS = 250;
/** At most one warning about the descriptors in this time. */
export const FD_WARN_INTERVAL_MS = 60_000;

/** Whether an error of the accept loop is the process (or system) out of descriptors. */
export function isOutOfDescriptors(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /os error 2[34]\b|too many open files/i.test(text);
}

/** What {@linkcode Listener} needs. */
export interface ListenerOptions {
  readonly hostname: string;
  readonly port: number;
  readonly handler: Deno.ServeHandler<Deno.NetAddr>;
  /** What a response whose handler or body failed gets (Deno's default prints a stack). */
  readonly onError?: (error: unknown) => Response | Promise<Response>;
  readonly log: Logger;
  /** Waits before it listens again (tests). */
  readonly relistenDelayMs?: number;
}

/** A `Deno.serve` that listens again after it ran out of descriptors. */
export class Listener {
  readonly #options: ListenerOptions;
  /** Every server it started: the connections of an ended one may still be open. */
  readonly #servers: Deno.HttpServer<Deno.NetAddr>[] = [];
  #port: number;
  #stopped = false;
  #lastWarn = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #failed: Promise<never>;
  #fail: (error: unknown) => void = () => {};

  /** Listens (throws as `Deno.serve` does when it cannot). */
  constructor(options: ListenerOptions) {
    this.#options = options;
    this.#failed = new Promise<never>((_, reject) => this.#fail = reject);
    // Observed: an end for another reason rejects it, and runServe awaits it.
    this.#failed.catch(() => {});
    this.#port = this.#listen(options.port).addr.port;
  }

  /** The port it listens on. */
  get port(): number {
    return this.#port;
  }

  /** Rejects when the accept loop ended for another reason than descriptors. */
  get failed(): Promise<never> {
    return this.#failed;
  }

  #listen(port: number): Deno.HttpServer<Deno.NetAddr> {
    const server = Deno.serve({
      hostname: this.#options.hostname,
      port,
      onListen: () => {},
      ...(this.#options.onError && { onError: this.#options.onError }),
    }, this.#options.handler);
    server.finished.catch((error: unknown) => this.#ended(error));
    this.#servers.push(server);
    return server;
  }

  #ended(error: unknown): void {
    if (this.#stopped) return;
    if (!isOutOfDescriptors(error)) {
      this.#fail(error);
      return;
    }
    this.#warn();
    this.#again();
  }

  #warn(): void {
    const now = Date.now();
    if (now - this.#lastWarn < FD_WARN_INTERVAL_MS) return;
    this.#lastWarn = now;
    this.#options.log.warn(
      "out of file descriptors: new connections are refused until some close " +
        "(raise the limit, e.g. ulimit -n or LimitNOFILE=)",
    );
  }

  #again(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      try {
        this.#listen(this.#port);
      } catch (error) {
        if (!isOutOfDescriptors(error)) {
          this.#fail(error);
          return;
        }
        this.#warn();
        this.#again();
      }
    }, this.#options.relistenDelayMs ?? RELISTEN_DELAY_MS);
  }

  /** Stops listening again and shuts its servers down (as `Deno.HttpServer.shutdown`). */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.allSettled(this.#servers.map((server) => server.shutdown()));
  }
}
