/**
 * The sign of an older upstream server at a URL (LEGACY.md): a 400 or 404 to
 * server/discover whose body is a JSON-RPC error, or asks for a session. The
 * modern link reports only the status of such a response, so the bridge
 * looks once more at the body: one more server/discover POST, only after a
 * 400 or 404 and only with `--protocol auto`.
 *
 * @module
 */

import { isObject } from "../jsonrpc/message.ts";
import { boundedFetch, mediaTypeOf } from "./http_fetch.ts";
import type { LegacyHttpOptions } from "./http_link.ts";

/** The most of the body that the sign reads. */
const SIGN_BYTES = 64 * 1024;

/**
 * True for the body of a refused server/discover that shows an older
 * server: a JSON-RPC error object, or a text that asks for a session.
 *
 * @example
 * ```ts
 * import { isOlderBody } from "./http_sign.ts";
 * const body = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}';
 * if (!isOlderBody(body) || isOlderBody("<html>Not Found</html>")) throw new Error();
 * ```
 */
export function isOlderBody(text: string): boolean {
  try {
    const value = JSON.parse(text);
    if (isObject(value) && isObject(value.error) && typeof value.error.code === "number") {
      return true;
    }
  } catch {
    // not JSON: the text may still ask for a session
  }
  return /\bsession\b/i.test(text);
}

/**
 * Sends server/discover once more and reads the body of its answer: true for
 * a 400 or 404 with the sign of an older server. It never throws.
 */
export async function olderHttpSign(
  options: LegacyHttpOptions,
  signal: AbortSignal,
): Promise<boolean> {
  const client = Deno.createHttpClient({
    ...(options.caCerts && { caCerts: [...options.caCerts] }),
    http1: true,
    http2: true,
  });
  try {
    const fetchFn = boundedFetch({
      client,
      maxResponseBytes: SIGN_BYTES,
      ...(options.tokenSource && { tokenSource: options.tokenSource }),
      ...(options.fetch && { fetch: options.fetch }),
    });
    const response = await fetchFn(options.url, {
      method: "POST",
      signal,
      headers: {
        ...Object.fromEntries(options.headers ?? []),
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "server/discover", params: {} }),
    });
    if (response.status !== 400 && response.status !== 404) {
      await response.body?.cancel().catch(() => {});
      return false;
    }
    const type = mediaTypeOf(response.headers.get("content-type"));
    if (type !== "application/json" && !type.startsWith("text/")) {
      await response.body?.cancel().catch(() => {});
      return false;
    }
    return isOlderBody(await readSome(response.body, SIGN_BYTES));
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/** At most `limit` bytes of a body, as text. */
async function readSome(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes.subarray(0, limit));
}
