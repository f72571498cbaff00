/**
 * The command line of an upstream server at a URL (REMOTE.md): the URL
 * positional, `--header-env`, `--ca-file`, `--max-response-bytes` and
 * `--allow-http`, and the `Connect` that makes the HTTP link. A reason for
 * an invalid argument names the flag, the variable or the file, never the
 * URL, a header value or the content of a file.
 *
 * @module
 */

import { isLoopbackHost } from "../net/loopback.ts";
import { UpstreamFailure } from "./failure.ts";
import { HEADER_NAME } from "./http_headers.ts";
import type { PostTransport } from "../http/post_transport.ts";
import type { Connect } from "./link.ts";
import type { TokenSource } from "../http/token_source.ts";
import { onceWarn } from "../http/proxy_refusal.ts";

/** The values of the flags of a URL upstream after `parseArgs` (`cli/flags.ts`). */
export interface HttpFlagValues {
  readonly "header-env"?: string[] | undefined;
  readonly "ca-file"?: string | undefined;
  readonly "max-response-bytes"?: string | undefined;
  readonly "allow-http"?: boolean | undefined;
  readonly "no-hinted-resend"?: boolean | undefined;
}

/** The default of `--max-response-bytes`: 64 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** An upstream server at a URL, as the command line gives it. */
export interface RemoteTarget {
  /** Never logged: its path and query can hold a key. */
  readonly url: URL;
  /** The headers of `--header-env` with their values. */
  readonly headers: readonly (readonly [string, string])[];
  /** The PEM text of `--ca-file`. */
  readonly caCerts?: readonly string[];
  readonly maxResponseBytes: number;
  /**
   * A tools/call of a tool that the last tools/list marked read-only or
   * idempotent may go once more after a failure of the transport (false:
   * `--no-hinted-resend`).
   */
  readonly hintedResend: boolean;
}

/** A command line of a URL upstream that is not valid; the message is one line without a secret. */
export class RemoteArgumentError extends Error {
  override name = "RemoteArgumentError";
}

/**
 * A `--ca-file` that cannot be used (exit 2): a failure of a file, not of
 * the arguments, so it ends without the pointer to `--help`.
 */
export class CaFileError extends RemoteArgumentError {
  override name = "CaFileError";
}

/** Headers that the link writes itself from the message. */
const OWN_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "accept",
  "content-length",
  "host",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "mcp-session-id",
]);
/**
 * What an HTTP field value may hold (RFC 9110, section 5.5): tab, the visible
 * ASCII characters and space, and the bytes 0x80-0xFF (obs-text, sent as
 * Latin-1). Not CR, LF, NUL, the other control characters or a character
 * above U+00FF: such a header cannot be sent, and every request would fail.
 */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** True for a positional that is a URL, not a command (`scheme://`). */
export function isUrlArgument(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

function parseUrl(text: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RemoteArgumentError("the URL of the upstream server is not valid");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new RemoteArgumentError("the URL of the upstream server needs the scheme https or http");
  }
  if (url.username !== "" || url.password !== "") {
    throw new RemoteArgumentError(
      "the URL of the upstream server must not hold a user name or a password; use --header-env",
    );
  }
  if (url.protocol === "http:" && !allowHttp && !isLoopbackHost(url.hostname)) {
    throw new RemoteArgumentError(
      "a plain http: URL needs a loopback host (or --allow-http); use https",
    );
  }
  // The fragment is never sent.
  url.hash = "";
  return url;
}

function parseHeaders(
  entries: readonly string[],
  env: (name: string) => string | undefined,
): [string, string][] {
  const out: [string, string][] = [];
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = eq === -1 ? "" : entry.slice(0, eq).trim();
    const variable = eq === -1 ? "" : entry.slice(eq + 1).trim();
    if (!HEADER_NAME.test(name) || variable === "") {
      throw new RemoteArgumentError("--header-env needs NAME=VARIABLE");
    }
    const lower = name.toLowerCase();
    if (OWN_HEADERS.has(lower) || lower.startsWith("mcp-param-")) {
      throw new RemoteArgumentError(`--header-env: the bridge sets the header ${name} itself`);
    }
    const value = env(variable);
    if (value === undefined) {
      throw new RemoteArgumentError(
        `--header-env: the environment variable ${variable} is not set`,
      );
    }
    if (!FIELD_VALUE.test(value)) {
      throw new RemoteArgumentError(
        `--header-env: the environment variable ${variable} is not a valid header value`,
      );
    }
    out.push([name, value.trim()]);
  }
  return out;
}

function readCaFile(path: string, readFile: (path: string) => string): string[] {
  let text: string;
  try {
    text = readFile(path);
  } catch {
    throw new CaFileError(`--ca-file: cannot read the file ${path}`);
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new CaFileError(`--ca-file: the file ${path} has no PEM certificate`);
  }
  try {
    Deno.createHttpClient({ caCerts: [text] }).close();
  } catch {
    throw new CaFileError(
      `--ca-file: the file ${path} has a certificate that is not valid`,
    );
  }
  return [text];
}

/** How {@linkcode parseRemote} reads the environment and files (tests pass their own). */
export interface RemoteEnv {
  readonly env?: (name: string) => string | undefined;
  readonly readFile?: (path: string) => string;
}

/**
 * The target of a URL upstream from the URL positional and the flags.
 * Throws {@linkcode RemoteArgumentError} (exit 2) for a URL that is not
 * allowed, a missing variable of `--header-env` or a `--ca-file` that
 * cannot be used.
 */
export function parseRemote(
  urlText: string,
  values: HttpFlagValues,
  io: RemoteEnv = {},
): RemoteTarget {
  const url = parseUrl(urlText, values["allow-http"] === true);
  const env = io.env ?? ((name: string) => Deno.env.get(name));
  const headers = parseHeaders(values["header-env"] ?? [], env);
  const limitText = values["max-response-bytes"];
  let maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
  if (limitText !== undefined) {
    maxResponseBytes = Number(limitText);
    if (
      limitText.trim() === "" || !Number.isSafeInteger(maxResponseBytes) || maxResponseBytes <= 0
    ) {
      throw new RemoteArgumentError(
        "--max-response-bytes needs a positive integer",
      );
    }
  }
  const caPath = values["ca-file"];
  const caCerts = caPath === undefined
    ? undefined
    : readCaFile(caPath, io.readFile ?? ((path) => Deno.readTextFileSync(path)));
  const hintedResend = values["no-hinted-resend"] !== true;
  return { url, headers, maxResponseBytes, hintedResend, ...(caCerts && { caCerts }) };
}

/**
 * The proxy variable that applies to the scheme of the URL, upper or lower
 * case. fetch reads it itself; the bridge only checks that it is a URL.
 */
function proxyVariable(url: URL, env: (name: string) => string | undefined): string | undefined {
  const names = url.protocol === "https:"
    ? ["HTTPS_PROXY", "https_proxy"]
    : ["HTTP_PROXY", "http_proxy"];
  for (const name of names) {
    const value = env(name);
    if (value !== undefined && value !== "") return value;
  }
  return undefined;
}

/** What the link of a URL upstream needs besides the target. */
export interface RemoteConnectOptions {
  readonly tokenSource?: TokenSource;
  readonly debug?: (message: string) => void;
  /** The warn line of a refusal of the proxy (`proxy_refusal.ts`), once per link. */
  readonly warn?: (message: string) => void;
  readonly env?: (name: string) => string | undefined;
  /** How long an idle HTTP/1.1 connection stays (the limit `http_pool_idle_ms`). */
  readonly poolIdleMs?: number;
}

/**
 * The `Connect` of a URL upstream: it makes the link and its transport,
 * fetch with HTTP clients of its own (`post_transport.ts`: the CA
 * certificates of `--ca-file`, HTTP/2 or HTTP/1.1, the proxy variables; a
 * refusal of the proxy said as one, `proxy_refusal.ts`). It rejects with
 * `connect_failed` when the client cannot be made, for example for a proxy
 * variable that is not a URL. The link's modules load at the first connect:
 * only a URL upstream loads them, and one that cannot load is `connect_failed`
 * too.
 */
export function connectRemote(target: RemoteTarget, options: RemoteConnectOptions = {}): Connect {
  return async () => {
    const env = options.env ?? ((name: string) => Deno.env.get(name));
    let transport: PostTransport;
    let createHttpLink: typeof import("./http.ts").createHttpLink;
    try {
      const proxy = proxyVariable(target.url, env);
      if (proxy !== undefined) new URL(proxy.includes("://") ? proxy : `http://${proxy}`);
      const [http, post] = await Promise.all([
        import("./http.ts"),
        import("../http/post_transport.ts"),
      ]);
      createHttpLink = http.createHttpLink;
      transport = post.fetchTransport({
        ...(target.caCerts && { caCerts: target.caCerts }),
        ...(options.debug && { debug: options.debug }),
        ...(options.poolIdleMs !== undefined && { poolIdleMs: options.poolIdleMs }),
        refused: onceWarn(options.warn, env("SANDBOX_RUNTIME") === "1"),
      });
    } catch {
      throw new UpstreamFailure("connect_failed");
    }
    return await createHttpLink({
      url: target.url,
      headers: target.headers,
      maxResponseBytes: target.maxResponseBytes,
      hintedResend: target.hintedResend,
      transport,
      ...(options.tokenSource && { tokenSource: options.tokenSource }),
      ...(options.debug && { debug: options.debug }),
    });
  };
}
