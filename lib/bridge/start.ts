/**
 * Steps 2 to 5 of the first initialize: the capabilities for the upstream
 * server, the start of the upstream, and server/discover with its limit.
 *
 * @module
 */

import type { JsonObject } from "../jsonrpc/message.ts";
import type { UpstreamLink } from "../upstream/link.ts";
import { UpstreamClient } from "../upstream/session.ts";
import { BridgeError } from "./errors.ts";
import { mapDiscoverFailure } from "./failures.ts";
import { formatLimit } from "./limits.ts";
import type { Logger } from "./log.ts";
import { upstreamCapabilities, upstreamClientInfo } from "./translate.ts";

/** What the start needs. */
export interface StartOptions {
  /** Starts the upstream server; a throw is a spawn failure. */
  readonly connect: () => UpstreamLink;
  readonly clientInfo: JsonObject;
  /** The capabilities of the client, in revision 2025-11-25. */
  readonly capabilities: JsonObject;
  readonly discoverTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly onLogMessage: (params: JsonObject) => void;
}

/** How the start ended. On a failure or a cancel, the upstream is already stopping. */
export type Started =
  | { readonly kind: "ready"; readonly session: UpstreamClient; readonly discover: JsonObject }
  | { readonly kind: "failed"; readonly error: BridgeError; readonly stopped: Promise<void> }
  | { readonly kind: "canceled"; readonly stopped: Promise<void> };

/** Starts the upstream server and sends server/discover. Never throws. */
export async function startUpstream(options: StartOptions): Promise<Started> {
  const { log } = options;
  let link: UpstreamLink;
  try {
    link = options.connect();
  } catch (error) {
    // The error names no path: the command can hold a secret.
    log.error(`cannot start the upstream server: ${error instanceof Error ? error.name : "error"}`);
    return { kind: "failed", error: BridgeError.of("spawn_failed"), stopped: Promise.resolve() };
  }
  const session = new UpstreamClient(link, {
    clientInfo: upstreamClientInfo(options.clientInfo),
    capabilities: upstreamCapabilities(options.capabilities),
    onLogMessage: options.onLogMessage,
    debug: (message) => log.debug(message),
  });
  try {
    const discover = await session.discover(options.discoverTimeoutMs, options.signal);
    if (!options.signal.aborted) return { kind: "ready", session, discover };
  } catch (error) {
    if (!options.signal.aborted) {
      log.error("server/discover failed");
      const failure = mapDiscoverFailure(error, formatLimit(options.discoverTimeoutMs));
      return { kind: "failed", error: failure, stopped: session.close() };
    }
  }
  return { kind: "canceled", stopped: session.close() };
}
