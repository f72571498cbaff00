/**
 * The wiring of `--protocol auto` for main.ts: how an upstream server of
 * revision 2025-11-25 is reached, from the same inputs as the modern link.
 *
 * @module
 */

import type { Connect } from "../upstream/link.ts";
import type { TokenSource } from "../http/token_source.ts";
import type { LegacyOptions } from "./auto.ts";
import type { LegacyHttpOptions, RenewOptions } from "./http_link.ts";

/** The parts of a URL upstream that the 2025-11-25 link needs (RemoteTarget of main.ts). */
export interface LegacyRemote {
  readonly url: URL;
  readonly headers: readonly (readonly [string, string])[];
  readonly caCerts?: readonly string[];
  readonly maxResponseBytes: number;
  /** False with `--no-hinted-resend`. */
  readonly hintedResend?: boolean;
}

/** What the 2025-11-25 link needs besides the target. */
export interface LegacyConnectOptions {
  readonly tokenSource?: TokenSource;
  readonly debug?: (message: string) => void;
  /** The warn line of a refusal of the proxy. */
  readonly warn?: (message: string) => void;
  /** The info line of a new session of the upstream server (the Output channel). */
  readonly info?: (message: string) => void;
  /** The waits and the time limit of a new session (from the bridge's limits). */
  readonly renew?: RenewOptions;
  /** How long an idle HTTP/1.1 connection stays (the limit `http_pool_idle_ms`). */
  readonly poolIdleMs?: number;
}

/**
 * The `legacy` option of the front end: for a command, the command again
 * (`spawn`, used only when the probe ended the child); for a URL, the link of
 * the 2025-11-25 Streamable HTTP transport.
 */
export function legacyConnect(
  remote: LegacyRemote | undefined,
  spawn: Connect,
  options: LegacyConnectOptions = {},
): Pick<LegacyOptions, "connect"> {
  if (!remote) return { connect: spawn };
  const http: LegacyHttpOptions = {
    url: remote.url,
    headers: remote.headers,
    maxResponseBytes: remote.maxResponseBytes,
    ...(remote.hintedResend === false && { hintedResend: false }),
    ...(remote.caCerts && { caCerts: remote.caCerts }),
    ...(options.tokenSource && { tokenSource: options.tokenSource }),
    ...(options.debug && { debug: options.debug }),
    ...(options.warn && { warn: options.warn }),
    ...(options.info && { info: options.info }),
    ...(options.renew && { renew: options.renew }),
    ...(options.poolIdleMs !== undefined && { poolIdleMs: options.poolIdleMs }),
  };
  return {
    // The v1 SDK's transport loads only for an older server at a URL.
    connect: async () => (await import("./http_link.ts")).connectLegacyHttp(http),
  };
}
