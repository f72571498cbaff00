/**
 * Steps 2 to 5 of the first initialize: the capabilities for the upstream
 * server, the start of the upstream, and server/discover with its limit.
 *
 * @module
 */

import type { JsonObject } from "../jsonrpc/message.ts";
import type { Connect, UpstreamLink } from "../upstream/link.ts";
import { UpstreamClient } from "../upstream/client.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import type { BridgeError } from "../errors/errors.ts";
import { failureReport, mapDiscoverFailure, mapUpstreamFailure } from "../errors/failures.ts";
import { formatLimit } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import { upstreamCapabilities, upstreamClientInfo } from "../translate/translate.ts";

/** What the start needs. */
export interface StartOptions {
  /** Makes the link; a rejection is spawn_failed or connect_failed. */
  readonly connect: Connect;
  readonly clientInfo: JsonObject;
  /** The capabilities of the client, in revision 2025-11-25. */
  readonly capabilities: JsonObject;
  readonly discoverTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly onLogMessage: (params: JsonObject) => void;
  /** The back pressure of the client's output, for the reader of the link. */
  readonly hold?: () => Promise<void> | undefined;
  /**
   * `--protocol auto` (LEGACY.md): takes over after a server/discover that
   * failed, on the same session (`lib/legacy/auto.ts`). Undefined: the
   * failure of discover stands.
   */
  readonly fallback?: Fallback;
}

/**
 * What takes over after a failed server/discover: another outcome of the
 * start (it then owns `session`), or undefined when the failure stands.
 */
export type Fallback = (
  error: unknown,
  session: UpstreamClient,
  options: StartOptions,
) => Promise<Started | undefined>;

/** How the start ended. On a failure or a cancel, the upstream is already stopping. */
export type Started =
  | { readonly kind: "ready"; readonly session: UpstreamClient; readonly discover: JsonObject }
  /** An upstream server of revision 2025-11-25, initialized: the pass-through. */
  | { readonly kind: "legacy"; readonly session: UpstreamClient; readonly initialize: JsonObject }
  | { readonly kind: "failed"; readonly error: BridgeError; readonly stopped: Promise<void> }
  | { readonly kind: "canceled"; readonly stopped: Promise<void> };

/** The upstream client of the start on a link. */
export function upstreamClientOn(link: UpstreamLink, options: StartOptions): UpstreamClient {
  return new UpstreamClient(link, {
    clientInfo: upstreamClientInfo(options.clientInfo),
    capabilities: upstreamCapabilities(options.capabilities),
    onLogMessage: options.onLogMessage,
    debug: (message) => options.log.debug(message),
    ...(options.hold && { hold: options.hold }),
  });
}

/** Starts the upstream server and sends server/discover. Never throws. */
export async function startUpstream(options: StartOptions): Promise<Started> {
  const { log } = options;
  let link: UpstreamLink;
  try {
    link = await options.connect();
  } catch (error) {
    // The error names no path and no URL: both can hold a secret.
    const failure = error instanceof UpstreamFailure ? error : new UpstreamFailure("spawn_failed");
    const mapped = mapUpstreamFailure(failure, "server/discover", "");
    log.error(`cannot start the upstream server: ${failureReport(mapped)}`);
    return { kind: "failed", error: mapped, stopped: Promise.resolve() };
  }
  const session = upstreamClientOn(link, options);
  try {
    const discover = await session.discover(options.discoverTimeoutMs, options.signal);
    if (!options.signal.aborted) {
      if (options.fallback) {
        log.info("revision 2026-07-28: the upstream server answered server/discover");
      }
      return { kind: "ready", session, discover };
    }
  } catch (error) {
    const other = options.signal.aborted
      ? undefined
      : await options.fallback?.(error, session, options);
    if (other) return other;
    if (!options.signal.aborted) {
      const failure = mapDiscoverFailure(error, formatLimit(options.discoverTimeoutMs));
      log.error(`initialize failed: ${failureReport(failure)}`);
      return { kind: "failed", error: failure, stopped: session.close() };
    }
  }
  return { kind: "canceled", stopped: session.close() };
}
