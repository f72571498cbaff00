/**
 * Random tokens: the `state` of a sign-in and the secret path of its
 * redirect URI.
 *
 * @module
 */

/**
 * `bytes` random bytes of the system's secure generator, written in
 * base64url without padding (RFC 4648 section 5): `A-Z a-z 0-9 - _`, of
 * length `ceil(bytes * 4 / 3)`.
 *
 * @example
 * ```ts
 * import { randomToken } from "./random_token.ts";
 * const token = randomToken(24); // 192 bits
 * if (!/^[A-Za-z0-9_-]{32}$/.test(token)) throw new Error();
 * ```
 */
export function randomToken(bytes: number): string {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...random)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}
