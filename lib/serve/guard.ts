/**
 * The checks of every request to `serve` before it reaches a session: the
 * security warning of the Streamable HTTP transport (revision 2025-11-25).
 *
 * - DNS rebinding: a web page that makes a browser ask a name of its own
 *   that resolves to 127.0.0.1 sends that name in `Host` and its page's
 *   origin in `Origin`. On a loopback address, `Host` must be a loopback
 *   name; everywhere, a request with an `Origin` must come from an allowed
 *   origin (the server's own, or one of `--allow-origin`). A request without
 *   `Origin` (VS Code, curl, an SDK client) passes this check.
 * - A bearer token (`--token-env`): required on an address that is not
 *   loopback, compared in constant time (the SHA-256 of both, so that the
 *   length of the token does not show either). A CORS preflight passes
 *   without it (a browser never sends credentials there); the request
 *   after it needs it.
 *
 * @module
 */

import { isLoopbackHost } from "../net/loopback.ts";

/** What the checks know of the server. */
export interface GuardSettings {
  /** The host that `serve` listens on, as given (`127.0.0.1`, `::1`, `0.0.0.0`, ...). */
  readonly host: string;
  /** The port it listens on (the real one, also after `--port 0`). */
  readonly port: number;
  /** The origins of `--allow-origin`, each as `new URL(...).origin` writes it. */
  readonly allowedOrigins: readonly string[];
  /** The SHA-256 of the token of `--token-env`; none: no token is asked. */
  readonly tokenDigest?: Uint8Array;
}

/** Why a request is refused, with its HTTP status. */
export interface Refusal {
  readonly status: 401 | 403;
  readonly message: string;
}

/** True when the server listens on a loopback address only. */
export function isLoopbackBind(host: string): boolean {
  return isLoopbackHost(host);
}

/** The host part of a `Host` header (without its port), or undefined when it is not one. */
function hostName(header: string): string | undefined {
  try {
    return new URL(`http://${header}/`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * The origins that a browser page of the server itself would have: the
 * loopback names on its port when it listens on loopback, else none (a
 * server on another address has no page of its own).
 */
function ownOrigins(settings: GuardSettings): string[] {
  if (!isLoopbackBind(settings.host)) return [];
  return ["localhost", "127.0.0.1", "[::1]"].map((host) => `http://${host}:${settings.port}`);
}

/**
 * The SHA-256 of a token, as the guard keeps it.
 *
 * @example
 * ```ts
 * import { tokenDigest } from "./guard.ts";
 * if ((await tokenDigest("secret")).length !== 32) throw new Error();
 * ```
 */
export async function tokenDigest(token: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
}

/** Compares two digests of the same length without an early exit. */
function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.min(a.length, b.length); i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * The refusal of a request, or undefined when it passes: first the Host
 * and the Origin (403), then the token (401).
 *
 * @example
 * ```ts
 * import { checkRequest } from "./guard.ts";
 * const settings = { host: "127.0.0.1", port: 8123, allowedOrigins: [] };
 * const host = "127.0.0.1:8123";
 * const ok = new Request(`http://${host}/mcp`, { method: "POST", headers: { host } });
 * if (await checkRequest(ok, settings)) throw new Error("no Origin: a local client");
 * const page = new Request(`http://${host}/mcp`, {
 *   method: "POST",
 *   headers: { host, origin: "https://evil.example" },
 * });
 * if ((await checkRequest(page, settings))?.status !== 403) throw new Error();
 * ```
 */
export async function checkRequest(
  request: Request,
  settings: GuardSettings,
): Promise<Refusal | undefined> {
  if (isLoopbackBind(settings.host)) {
    const host = request.headers.get("host");
    const name = host === null ? undefined : hostName(host);
    if (name === undefined || !isLoopbackHost(name)) {
      return { status: 403, message: "Forbidden: the Host header is not a loopback name" };
    }
  }
  const origin = request.headers.get("origin");
  if (origin !== null) {
    let normal: string | undefined;
    try {
      normal = new URL(origin).origin;
    } catch {
      normal = undefined;
    }
    const allowed = [...ownOrigins(settings), ...settings.allowedOrigins];
    if (normal === undefined || normal === "null" || !allowed.includes(normal)) {
      return { status: 403, message: "Forbidden: the origin is not allowed" };
    }
  }
  // A browser's CORS preflight never carries credentials (the Fetch standard): it needs
  // none, and the request after it does.
  const preflight = request.method === "OPTIONS" &&
    request.headers.has("access-control-request-method");
  if (settings.tokenDigest && !preflight) {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    const given = await tokenDigest(match?.[1] ?? "");
    if (!match || !sameDigest(given, settings.tokenDigest)) {
      return { status: 401, message: "Unauthorized: a valid bearer token is needed" };
    }
  }
  return undefined;
}
