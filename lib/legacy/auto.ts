/**
 * `--protocol auto` (LEGACY.md): after a server/discover that shows an older
 * upstream server, the bridge initializes it as a client of revision
 * 2025-11-25 and the connection becomes a pass-through. Over stdio this
 * happens on the same process (started again once when the probe ended it);
 * over HTTP on a link of the 2025-11-25 Streamable HTTP transport.
 *
 * @module
 */

import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import type { Connect } from "../upstream/link.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { BridgeError } from "../errors/errors.ts";
import { failureReport, mapUpstreamFailure } from "../errors/failures.ts";
import { formatLimit } from "../settings/limits.ts";
import { type Fallback, type StartOptions, upstreamClientOn } from "../start/start.ts";
import { isInitializeResult, legacyInitializeParams } from "./initialize.ts";
import type { PassThrough } from "./passthrough.ts";

// The values of `--protocol`, in a module of their own: the command line reads them without
// loading the pass-through.
export { isProtocol, type Protocol, PROTOCOLS } from "./protocol.ts";

/**
 * True when a failed server/discover of a stdio upstream shows a server of
 * an older revision: -32601, or -32600 "not initialized".
 */
export function isOlderStdio(error: unknown): boolean {
  if (!(error instanceof UpstreamFailure) || error.kind !== "rpc" || !error.error) return false;
  const { code, message } = error.error;
  return code === -32601 || (code === -32600 && /not\s+initiali[sz]ed/i.test(message));
}

/** The statuses of a failed server/discover of an HTTP upstream that may show an older server. */
const OLDER_HTTP_STATUSES: ReadonlySet<number> = new Set([400, 404]);

/**
 * The sign of an older server at a URL: server/discover got a 400 or 404
 * whose body is a JSON-RPC error or asks for a session. The HTTP link reads
 * that body once (`errorBody` of the failure): no second request is sent.
 */
export function isOlderHttp(error: unknown): boolean {
  if (!(error instanceof UpstreamFailure) || error.status === undefined) return false;
  return OLDER_HTTP_STATUSES.has(error.status) && error.errorBody !== undefined;
}

/** How the pass-through reaches an upstream server of revision 2025-11-25. */
export interface LegacyOptions {
  /**
   * Makes the link of a new start: the command again (stdio), or the link
   * of the 2025-11-25 Streamable HTTP transport (HTTP).
   */
  readonly connect: Connect;
  /**
   * True when the link of the probe is shared by other front ends (`serve`):
   * the pass-through then always makes a link of its own, as over HTTP.
   */
  readonly ownLink?: boolean;
  /** The pass-through that takes the upstream client. */
  readonly passthrough: PassThrough;
  /** The params of the client's initialize. */
  readonly params: JsonObject;
}

/** True for a failure that says the link ended (the probe stopped the child). */
function linkEnded(error: unknown): boolean {
  return error instanceof UpstreamFailure && (error.kind === "exited" || error.kind === "closed");
}

/** The error of a failed upstream initialize: the upstream's unchanged, else the table's. */
function initializeError(error: unknown, limitMs: number): BridgeError {
  if (error instanceof UpstreamFailure && error.kind === "rpc" && error.error) {
    return BridgeError.passthrough(error.error);
  }
  return mapUpstreamFailure(error, "initialize", formatLimit(limitMs));
}

/**
 * The {@linkcode Fallback} of the start with `--protocol auto`: an older
 * upstream server gets the initialize of the client; any other failure of
 * server/discover stands.
 */
export function legacyFallback(legacy: LegacyOptions): Fallback {
  return async (error, probed, options) => {
    const remote = probed.link.isRemote;
    if (remote) {
      // Over HTTP too, a -32601 or "not initialized" error of the request itself.
      if (!isOlderHttp(error) && !isOlderStdio(error)) return undefined;
    } else if (!isOlderStdio(error)) return undefined;
    const { log, signal, discoverTimeoutMs } = options;
    const params = legacyInitializeParams(legacy.params);
    // Over HTTP the older server needs its own transport; over stdio the same
    // process, unless other front ends share it.
    const own = remote || legacy.ownLink === true;
    let session: UpstreamClient = probed;
    let restarted = own;
    if (own) {
      await probed.close();
      const next = await connectAgain(legacy.connect, options);
      if (next instanceof BridgeError) return failed(next);
      session = next;
    }
    for (;;) {
      legacy.passthrough.attach(session);
      try {
        const result = await session.request("initialize", params, {
          timeoutMs: discoverTimeoutMs,
          signal,
        });
        if (signal.aborted) return { kind: "canceled", stopped: session.close() };
        if (!isInitializeResult(result)) {
          log.error("the upstream initialize gave a result that is not valid");
          return failed(BridgeError.of("invalid_response"), session);
        }
        const version = isObject(result) ? String(result.protocolVersion) : "";
        log.info(
          `revision 2025-11-25: the upstream server does not know server/discover; ` +
            `the connection is a pass-through (protocol version ${version})`,
        );
        return { kind: "legacy", session, initialize: result };
      } catch (failure) {
        if (signal.aborted) return { kind: "canceled", stopped: session.close() };
        if (!restarted && linkEnded(failure)) {
          // The probe ended the child: it starts again, once.
          restarted = true;
          log.info("the upstream server stopped after server/discover; it starts again");
          await session.close();
          const next = await connectAgain(legacy.connect, options);
          if (next instanceof BridgeError) return failed(next);
          session = next;
          continue;
        }
        const error = initializeError(failure, discoverTimeoutMs);
        log.error(`the upstream initialize failed: ${failureReport(error)}`);
        return failed(error, session);
      }
    }
  };
}

function failed(error: BridgeError, session?: UpstreamClient) {
  return { kind: "failed", error, stopped: session?.close() ?? Promise.resolve() } as const;
}

/** A new link and its client; a link that cannot start gives the error of its cause. */
async function connectAgain(
  connect: Connect,
  options: StartOptions,
): Promise<UpstreamClient | BridgeError> {
  try {
    return upstreamClientOn(await connect(), options);
  } catch (error) {
    const failure = error instanceof UpstreamFailure ? error : new UpstreamFailure("spawn_failed");
    options.log.error(`cannot start the upstream server: ${failure.kind}`);
    return mapUpstreamFailure(failure, "initialize", "");
  }
}
