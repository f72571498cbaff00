/**
 * A new session of an upstream server of revision 2025-11-25 at a URL,
 * after the link lost one (`http_link.ts`): the client's initialize params
 * in a new transport, and its `notifications/initialized`. After a failed
 * connection first the wait of the listen stream, then again after each
 * wait until a session starts: the server may be away for a while.
 *
 * @module
 */

import { abortableDelay } from "../jsonrpc/abortable.ts";
import type { JsonObject } from "../jsonrpc/message.ts";
import { Backoff } from "../listen/stream_loss.ts";
import { isConnectionFailure, type RenewOptions, type SessionLoss } from "./get_stream.ts";
import type { OwnRequests } from "./own_requests.ts";
import { failureKindOf, type SessionTransport } from "./sdk_transport.ts";

/** What {@linkcode renewSession} needs of the link. */
export interface RenewalDeps {
  /** A transport of the SDK for a new session. */
  newTransport(): SessionTransport;
  /** The link's own requests (the initialize of the new session). */
  readonly own: OwnRequests;
  /** The params of the client's initialize. */
  readonly params: JsonObject;
  /** The client sent notifications/initialized: the new session gets it too. */
  readonly initialized: boolean;
  readonly options: RenewOptions;
  /** Aborts at the close of the link. */
  readonly signal: AbortSignal;
  /** A try found no connection (the requests until the next session fail so). */
  onConnectionFailure(): void;
  readonly debug: (message: string) => void;
}

/**
 * Starts a new session after the loss `loss`; resolves with its transport,
 * or undefined once the link closed.
 */
export async function renewSession(
  loss: SessionLoss,
  deps: RenewalDeps,
): Promise<SessionTransport | undefined> {
  const { options, signal } = deps;
  const backoff = new Backoff(options.firstMs, options.maxMs);
  let wait = loss === "connection" ? backoff.take() : 0;
  for (;;) {
    if (wait > 0) {
      try {
        await abortableDelay(wait, signal);
      } catch {
        return undefined;
      }
    }
    if (signal.aborted) return undefined;
    const transport = deps.newTransport();
    try {
      await deps.own.initialize(
        transport,
        deps.params,
        options.initializeTimeoutMs,
        deps.initialized,
      );
    } catch (error) {
      void transport.close().catch(() => {});
      if (signal.aborted) return undefined;
      if (isConnectionFailure(error)) deps.onConnectionFailure();
      wait = backoff.take();
      deps.debug(`a new session did not start (${failureKindOf(error)}); again in ${wait} ms`);
      continue;
    }
    if (!signal.aborted) return transport;
    void transport.close().catch(() => {});
    return undefined;
  }
}
