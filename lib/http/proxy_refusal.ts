/**
 * A refusal of the proxy, said as one: VS Code's sandbox (srt) reaches the
 * network only through its proxy, which allows only the domains of
 * `sandbox.network.allowedDomains`. It answers 403 to a CONNECT (an `https:`
 * URL) and to a plain request (an `http:` URL). Deno's fetch reports the
 * first as a connect error `unsuccessful tunnel` (any answer to CONNECT but
 * 200 and 407, without its status), and gives the second as a response with
 * srt's mark, the header `X-Proxy-Error`. Either fails the request at once
 * with its cause (`transport_failed`, or `discover_failed` at the start) and
 * the detail {@linkcode PROXY_REFUSED}; the first refusal of a link logs one
 * warn line that names the host and, in the sandbox, the rule to add.
 *
 * @module
 */

import { UpstreamFailure } from "../upstream/failure.ts";
import { transportSight } from "./transport_failure.ts";

/** The `data.detail` of a request that the proxy refused. */
export const PROXY_REFUSED = "the proxy refused the connection";

/** True for a fetch error of a CONNECT that the proxy answered with neither 200 nor 407. */
export function isTunnelRefusal(error: unknown): boolean {
  return transportSight(error).kind === "proxy_refused";
}

/** True for the 403 of a proxy that refused a plain request (srt marks it with `X-Proxy-Error`). */
export function isRefusalResponse(response: Response): boolean {
  return response.status === 403 && response.headers.has("x-proxy-error");
}

/** The failure of a request that the proxy refused. */
export function proxyRefusal(status?: number): UpstreamFailure {
  return new UpstreamFailure("transport_failed", {
    detail: PROXY_REFUSED,
    ...(status !== undefined && { status }),
  });
}

/**
 * The warn line of a refusal: it names the host (never the path or the
 * query of the URL) and, under `SANDBOX_RUNTIME=1`, the rule of `mcp.json`.
 *
 * @example
 * ```ts
 * import { refusalLine } from "./proxy_refusal.ts";
 * const line = refusalLine("mcp.example.com", true);
 * if (!line.includes("sandbox.network.allowedDomains")) throw new Error(line);
 * ```
 */
export function refusalLine(host: string, sandbox: boolean): string {
  return sandbox
    ? `the sandbox's proxy refused the connection to ${host}: add "${host}" to ` +
      `sandbox.network.allowedDomains in mcp.json, then restart the server`
    : `the proxy refused the connection to ${host} (HTTPS_PROXY or HTTP_PROXY)`;
}

/** Calls `warn` once for the first refusal, with the host of its URL. */
export function onceWarn(
  warn: ((message: string) => void) | undefined,
  sandbox: boolean,
): (url: URL) => void {
  let said = false;
  return (url) => {
    if (said || warn === undefined) return;
    said = true;
    warn(refusalLine(url.hostname, sandbox));
  };
}

/**
 * A fetch whose proxy refusals reject with {@linkcode proxyRefusal}; the
 * other answers and errors pass unchanged. `refused` is told the URL.
 */
export function refusalAware<A extends unknown[]>(
  fetchFn: (url: URL, ...rest: A) => Promise<Response>,
  refused: (url: URL) => void,
): (url: URL, ...rest: A) => Promise<Response> {
  return async (url, ...rest) => {
    let response: Response;
    try {
      response = await fetchFn(url, ...rest);
    } catch (error) {
      if (!isTunnelRefusal(error)) throw error;
      refused(url);
      throw proxyRefusal();
    }
    if (!isRefusalResponse(response)) return response;
    await response.body?.cancel().catch(() => {});
    refused(url);
    throw proxyRefusal(response.status);
  };
}
