/**
 * The GET stream of a session of revision 2025-11-25 (the server's messages
 * that answer no request), opened again after each loss for as long as the
 * session lives, with the wait of the listen stream: 0.5 s, doubling up to
 * 30 s, back to 0.5 s after a stream that lived the healthy time.
 *
 * Why not the v1 SDK's: it gives up after two failed tries, and then the
 * notifications of the server stop without a word. What ends the session
 * is reported to the link: a 404 for the session, a 400 for a session whose
 * stream the server opened before (the v1 SDK's servers), or a connection
 * that fails (the server is away).
 *
 * @module
 */

import { abortableDelay } from "../jsonrpc/abortable.ts";
import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import { Backoff } from "../listen/stream_loss.ts";
import { DEFAULT_LIMITS } from "../settings/limits.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { readEvents } from "../http/sse.ts";
import { transportSight } from "../http/transport_failure.ts";
import { mediaTypeOf } from "../http/bounded_fetch.ts";

/** The waits of the GET stream (those of the listen stream). */
export interface StreamWaits {
  /** The first wait (listen_backoff_ms). */
  readonly firstMs: number;
  /** The longest wait (listen_max_backoff_ms). */
  readonly maxMs: number;
  /** A stream that lives this long resets the wait (listen_healthy_ms). */
  readonly healthyMs: number;
}

/** The options of a new session: the waits of the listen stream, the limit of its initialize. */
export interface RenewOptions extends StreamWaits {
  /** The time limit of the initialize of a new session (discover_timeout_ms). */
  readonly initializeTimeoutMs: number;
}

/** The defaults of {@linkcode RenewOptions}: the limits of the bridge. */
export const DEFAULT_RENEW: RenewOptions = {
  firstMs: DEFAULT_LIMITS.listen_backoff_ms,
  maxMs: DEFAULT_LIMITS.listen_max_backoff_ms,
  healthyMs: DEFAULT_LIMITS.listen_healthy_ms,
  initializeTimeoutMs: DEFAULT_LIMITS.discover_timeout_ms,
};

/** Why the GET stream tells the link that the session ended. */
export type SessionLoss = "session" | "connection";

/** Options of {@linkcode GetStream}. */
export interface GetStreamOptions {
  readonly url: URL;
  /** The fetch of the link (its HTTP clients, the sign-in, the limit of an event). */
  readonly fetch: typeof fetch;
  /** The headers of a request of the session (session id, protocol version, --header-env). */
  readonly headers: () => Headers;
  /** The largest event (--max-response-bytes). */
  readonly maxEventBytes: number;
  readonly waits: StreamWaits;
  readonly onMessage: (message: JsonObject) => void;
  /** The session ended: once, and the stream stops. */
  readonly onLoss: (loss: SessionLoss, status?: number) => void;
  readonly debug: (message: string) => void;
}

/**
 * True for an error of a fetch that got no response: the server cannot be
 * reached. A stream that the server reset, refused or left above its GOAWAY
 * is no such error: the server is there, and only that request failed.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof UpstreamFailure) return error.kind === "transport_failed" && !error.status;
  if (
    !(error instanceof TypeError || (error instanceof Error && error.name === "ConnectionError"))
  ) {
    return false;
  }
  const kind = transportSight(error).kind;
  return kind !== "stream_reset" && kind !== "refused_stream" && kind !== "goaway";
}

/** The GET stream of one session. */
export class GetStream {
  readonly #o: GetStreamOptions;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;

  constructor(options: GetStreamOptions) {
    this.#o = options;
  }

  /** Opens the stream (once). */
  start(): void {
    this.#running ??= this.#run().catch(() => {
      // The close aborted a wait.
    });
  }

  /** Closes the stream and waits for its loop. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #run(): Promise<void> {
    const { url, waits, debug, onLoss } = this.#o;
    const signal = this.#stop.signal;
    const backoff = new Backoff(waits.firstMs, waits.maxMs);
    /** The server opened a stream of this session before. */
    let opened = false;
    while (!signal.aborted) {
      const headers = this.#o.headers();
      headers.set("accept", "text/event-stream");
      let response: Response;
      try {
        // No redirect is followed: the headers of the session and of --header-env stay at the URL.
        response = await this.#o.fetch(url, { method: "GET", headers, signal, redirect: "manual" });
      } catch (error) {
        if (signal.aborted) return;
        if (isConnectionFailure(error)) return onLoss("connection");
        // Only the kind: the message of a fetch error names the URL.
        debug(`the GET stream failed (${error instanceof UpstreamFailure ? error.kind : "fetch"})`);
        await abortableDelay(backoff.take(), signal);
        continue;
      }
      const { status } = response;
      if (status === 405) {
        await response.body?.cancel().catch(() => {});
        debug("the upstream server has no GET stream (HTTP status 405)");
        return;
      }
      if (status === 404 || (status === 400 && opened)) {
        await response.body?.cancel().catch(() => {});
        return onLoss("session", status);
      }
      const type = mediaTypeOf(response.headers.get("content-type"));
      if (!response.ok || !response.body || type !== "text/event-stream") {
        await response.body?.cancel().catch(() => {});
        const wait = backoff.take();
        debug(`the GET stream was refused (HTTP status ${status}); again in ${wait} ms`);
        await abortableDelay(wait, signal);
        continue;
      }
      opened = true;
      const since = performance.now();
      await this.#read(response.body);
      if (signal.aborted) return;
      if (performance.now() - since >= waits.healthyMs) backoff.reset();
      const wait = backoff.take();
      debug(`the GET stream ended; it opens again in ${wait} ms`);
      await abortableDelay(wait, signal);
    }
  }

  /** Reads the events of one stream until it ends or fails. */
  async #read(body: ReadableStream<Uint8Array>): Promise<void> {
    const text = new TextDecoder();
    try {
      for await (const event of readEvents(body, this.#o.maxEventBytes)) {
        if (event.event !== "message") continue;
        let message: unknown;
        try {
          message = JSON.parse(text.decode(event.data));
        } catch {
          message = undefined;
        }
        if (
          isObject(message) && typeof message.method !== "string" && Object.hasOwn(message, "id")
        ) {
          // Revision 2025-11-25: no response on the GET stream (a response counts on its own POST).
          this.#o.debug("dropped a response on the GET stream");
        } else if (isObject(message)) this.#o.onMessage(message);
        else this.#o.debug("dropped an event of the GET stream that is not a message");
      }
    } catch {
      // A connection that dropped, or an event over the limit: the stream opens again.
    }
  }
}
