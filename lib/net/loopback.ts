/**
 * The one rule of a loopback host, for every place that lets plain http:
 * through only to this machine: the URL rule of URL elicitations, the
 * upstream URL without `--allow-http`, and the authorization URL and the
 * endpoints of a sign-in.
 *
 * @module
 */

const DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const LOOPBACK_V4 = new RegExp(`^127\\.${DEC_OCTET}\\.${DEC_OCTET}\\.${DEC_OCTET}$`);

/**
 * True for a loopback host, as `URL.hostname` gives it or as it stands in the
 * authority of a URL read by RFC 3986:
 *
 * - `localhost` in any letter case (`LOCALHOST`, `LocalHost`);
 * - an address of 127.0.0.0/8 in dotted decimal with four parts, each 0 to
 *   255 without a leading zero (`127.0.0.1`, `127.255.255.254`; not `127.1`,
 *   `127.00.0.1`, `127.0.0.256` or `0x7f.0.0.1`);
 * - the IPv6 loopback `[::1]`, with brackets as `URL.hostname` gives it, or
 *   `::1` without them.
 *
 * Nothing else: no other spelling of an address (`[0:0:0:0:0:0:0:1]`,
 * `[::ffff:127.0.0.1]`, `2130706433`), no name that ends in `localhost`
 * (`localhost.evil.com`), no trailing dot, no port. `URL.hostname` already
 * writes IPv4 in dotted decimal and IPv6 in its shortest form, so a host
 * from `new URL(...)` needs no other care.
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./loopback.ts";
 * if (!isLoopbackHost(new URL("http://[::1]:8080/").hostname)) throw new Error();
 * if (!isLoopbackHost("LocalHost") || isLoopbackHost("127.1")) throw new Error();
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === "localhost" || LOOPBACK_V4.test(host) || host === "[::1]" ||
    host === "::1";
}

/** Whether 127.0.0.1:port can be listened on now (no listener holds it). */
export function portIsFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}
