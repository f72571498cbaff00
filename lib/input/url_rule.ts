/**
 * The URL rule of URL elicitations: the client gets a URL only when it is a
 * valid absolute URL with the scheme https, or http with a loopback host and
 * no user information. The URL is read with the rules of RFC 3986, and a URL
 * with a backslash is refused, because a browser (WHATWG rules) can read
 * another host from it.
 *
 * @module
 */

import { isLoopbackHost } from "../net/loopback.ts";

// RFC 3986 appendix B, with the authority split further below.
const URI = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/;
// The characters of a URI: unreserved, reserved and the percent sign.
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const PCT = /%(?![0-9A-Fa-f]{2})/;

/** The parts of an absolute URI. */
interface Parts {
  readonly scheme: string;
  readonly userinfo: string | undefined;
  readonly host: string;
  readonly port: string | undefined;
}

/** Parses an absolute URI with an authority by RFC 3986; undefined when it is not one. */
function parse(url: string): Parts | undefined {
  if (!URI_CHARS.test(url) || PCT.test(url)) return undefined;
  const match = URI.exec(url);
  if (!match || match[2] === undefined) return undefined;
  const scheme = match[1]!.toLowerCase();
  let authority = match[2];
  let userinfo: string | undefined;
  const at = authority.lastIndexOf("@");
  if (at !== -1) {
    userinfo = authority.slice(0, at);
    authority = authority.slice(at + 1);
  }
  let host: string;
  let port: string | undefined;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close === -1) return undefined;
    host = authority.slice(0, close + 1);
    const rest = authority.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) return undefined;
    port = rest === "" ? undefined : rest.slice(1);
  } else {
    const colon = authority.lastIndexOf(":");
    host = colon === -1 ? authority : authority.slice(0, colon);
    port = colon === -1 ? undefined : authority.slice(colon + 1);
    if (host.includes("[") || host.includes("]")) return undefined;
  }
  if (port !== undefined && !/^[0-9]*$/.test(port)) return undefined;
  if (host === "") return undefined;
  return { scheme, userinfo, host, port };
}

/**
 * True when the client may get the URL of a URL elicitation.
 */
export function isAllowedUrl(url: string): boolean {
  if (url.includes("\\")) return false;
  const parts = parse(url);
  if (!parts) return false;
  if (parts.scheme === "https") return true;
  return parts.scheme === "http" && parts.userinfo === undefined && isLoopbackHost(parts.host);
}
