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
import type { BridgeError } from "./errors.ts";
import { mapDiscoverFailure, mapUpstreamFailure } from "./failures.ts";
import { formatLimit } from "./limits.ts";
import type { Logger } from "./log.ts";
import { upstreamCapabilities, upstreamClientInfo } from "./translate.ts";

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
}

/** How the start ended. On a failure or a cancel, the upstream is already stopping. */
export type Started =
  | { readonly kind: "ready"; readonly session: UpstreamClient; readonly discover: JsonObject }
  | { readonly kind: "failed"; readonly error: BridgeError; readonly stopped: Promise<void> }
  | { readonly kind: "canceled"; readonly stopped: Promise<void> };

/** The longest detail that a log line quotes. */
const MAX_DETAIL_CHARS = 200;

/**
 * `cause: detail` of an error of the start, for the log line: the client's
 * `data.cause` and `data.detail` (which hold no secret and no URL: the error
 * table's rule), the detail on one line and cut at 200 characters.
 *
 * @example
 * ```ts
 * import { BridgeError } from "./errors.ts";
 * import { failureSummary } from "./start.ts";
 * const line = failureSummary(BridgeError.of("discover_failed", "Method not found"));
 * if (line !== "discover_failed: Method not found") throw new Error(line);
 * ```
 */
export function failureSummary(error: BridgeError): string {
  const data = error.data as { cause?: unknown; detail?: unknown } | undefined;
  const cause = typeof data?.cause === "string" ? data.cause : "internal";
  if (typeof data?.detail !== "string" || data.detail.trim() === "") return cause;
  // deno-lint-ignore no-control-regex
  let detail = data.detail.replaceAll(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (detail.length > MAX_DETAIL_CHARS) detail = `${detail.slice(0, MAX_DETAIL_CHARS)}...`;
  return `${cause}: ${detail}`;
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
    log.error(`cannot start the upstream server: ${failureSummary(mapped)}`);
    return { kind: "failed", error: mapped, stopped: Promise.resolve() };
  }
  const session = new UpstreamClient(link, {
    clientInfo: upstreamClientInfo(options.clientInfo),
    capabilities: upstreamCapabilities(options.capabilities),
    onLogMessage: options.onLogMessage,
    debug: (message) => log.debug(message),
    ...(options.hold && { hold: options.hold }),
  });
  try {
    const discover = await session.discover(options.discoverTimeoutMs, options.signal);
    if (!options.signal.aborted) return { kind: "ready", session, discover };
  } catch (error) {
    if (!options.signal.aborted) {
      const failure = mapDiscoverFailure(error, formatLimit(options.discoverTimeoutMs));
      log.error(`initialize failed: ${failureSummary(failure)}`);
      return { kind: "failed", error: failure, stopped: session.close() };
    }
  }
  return { kind: "canceled", stopped: session.close() };
}
