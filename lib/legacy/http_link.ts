/**
 * The link of an upstream server at a URL that speaks revision 2025-11-25:
 * the Streamable HTTP transport of that revision, by the v1 SDK's
 * `StreamableHTTPClientTransport`. It keeps the `Mcp-Session-Id` of the
 * initialize response, sends `MCP-Protocol-Version` once the initialize
 * result names it, opens the GET stream after `notifications/initialized`
 * (a 405 means the server has none, and the stream opens again after a loss
 * as the SDK does), and DELETEs the session at the close.
 *
 * Why the SDK's transport: it is the reference implementation of this wire
 * (sessions, the GET stream, resumption, same-origin redirects). What this
 * module adds: the fetch of {@linkcode boundedFetch} (the bridge's HTTP
 * client, the sign-in, `--max-response-bytes`), the failure of one request
 * by its id (a status, a body over the limit or cut off: the SDK only reports
 * such an error, for no request), and the errors without the body or the URL
 * that the SDK's messages hold.
 *
 * A 404 for the session means it expired: the link ends (`closed`), as a
 * lost upstream; the bridge does not initialize again behind the client.
 *
 * @module
 */

import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type LinkFetch, linkFetch } from "../upstream/post_transport.ts";
import { onceWarn, refusalAware } from "../upstream/proxy_refusal.ts";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  idKey,
  isObject,
  isRequestId,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink } from "../upstream/link.ts";
import type { TokenSource } from "../upstream/token_source.ts";
import { boundedFetch } from "./http_fetch.ts";

/** Options of {@linkcode connectLegacyHttp}. */
export interface LegacyHttpOptions {
  /** Never logged: its path or query can hold a key. */
  readonly url: URL;
  /** The headers of `--header-env`. */
  readonly headers?: readonly (readonly [string, string])[];
  readonly maxResponseBytes: number;
  /** The PEM text of `--ca-file`. */
  readonly caCerts?: readonly string[];
  readonly tokenSource?: TokenSource;
  readonly debug?: (message: string) => void;
  /** The warn line of a refusal of the proxy (`upstream/proxy_refusal.ts`), once per link. */
  readonly warn?: (message: string) => void;
  /** The fetch under the bridge's own (tests). */
  readonly fetch?: typeof fetch;
}

/** How long the close waits for the DELETE of the session. */
const DELETE_GRACE_MS = 1000;
/**
 * How long after the end of a response's body its response may still be on
 * its way through the SDK's SSE parser before the request fails.
 */
const BODY_END_GRACE_MS = 50;

/** The HTTP status of an error of the SDK's transport (its code, when it is one). */
function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof StreamableHTTPError)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" && code > 0 ? code : undefined;
}

function withDeadline(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.then(() => {}, () => {}),
    new Promise<void>((resolve) => timer = setTimeout(resolve, ms)),
  ]).finally(() => clearTimeout(timer));
}

class LegacyHttpLink implements UpstreamLink {
  readonly isRemote = true;
  readonly ended: Promise<LinkEnd>;
  readonly nextSignIn?: () => Promise<void>;
  #end!: (end: LinkEnd) => void;
  readonly #transport: StreamableHTTPClientTransport;
  /** The HTTP clients of the link (`linkFetch`: HTTP/2, or HTTP/1.1 without reuse). */
  readonly #http: LinkFetch;
  readonly #debug: (message: string) => void;
  #sink: FrameSink | undefined;
  #early: UpstreamFrame[] = [];
  #closed = false;
  #closing: Promise<void> | undefined;
  /** The requests without a response yet, by the key of their id. */
  readonly #open = new Map<string, RequestId>();
  readonly #initializeIds = new Set<string>();

  constructor(options: LegacyHttpOptions) {
    this.ended = new Promise((resolve) => this.#end = resolve);
    this.#debug = options.debug ?? (() => {});
    const source = options.tokenSource;
    if (source) this.nextSignIn = () => source.nextSignIn();
    this.#http = linkFetch({
      ...(options.caCerts && { caCerts: options.caCerts }),
      ...(options.debug && { debug: options.debug }),
    });
    const http = refusalAware(
      (url: URL, init: RequestInit) => this.#http.fetch(url, init),
      onceWarn(options.warn, Deno.env.get("SANDBOX_RUNTIME") === "1"),
    );
    const fetchFn = boundedFetch({
      maxResponseBytes: options.maxResponseBytes,
      ...(source && { tokenSource: source }),
      fetch: options.fetch ??
        ((input, init) => http(new URL(input instanceof Request ? input.url : input), init ?? {})),
      onBodyEnd: (id, failure) => this.#bodyEnd(id, failure),
    });
    this.#transport = new StreamableHTTPClientTransport(options.url, {
      fetch: fetchFn,
      requestInit: { headers: Object.fromEntries(options.headers ?? []) },
    });
    this.#transport.onmessage = (message: JSONRPCMessage) => {
      this.#onMessage(message as unknown as JsonObject);
    };
    this.#transport.onerror = (error: unknown) => {
      // The SDK's messages can hold the body of a response: only the status is logged.
      const code = httpStatusOf(error);
      const status = code === undefined ? "" : ` (HTTP status ${code})`;
      this.#debug(`the 2025-11-25 HTTP transport reported an error${status}`);
    };
  }

  /** Starts the transport (it sends nothing before the first message). */
  async start(): Promise<this> {
    await this.#transport.start();
    return this;
  }

  read(onFrame: FrameSink): Promise<void> {
    this.#sink = onFrame;
    for (const frame of this.#early.splice(0)) void onFrame(frame);
    return this.ended.then(() => {});
  }

  #deliver(frame: UpstreamFrame): void | Promise<void> {
    if (this.#closed) return;
    if (!this.#sink) {
      this.#early.push(frame);
      return;
    }
    return this.#sink(frame);
  }

  #onMessage(message: JsonObject): void {
    const id = message.id;
    if (typeof message.method !== "string" && isRequestId(id)) {
      const key = idKey(id);
      this.#open.delete(key);
      if (this.#initializeIds.delete(key) && isObject(message.result)) {
        const version = message.result.protocolVersion;
        if (typeof version === "string") this.#transport.setProtocolVersion(version);
      }
    }
    void this.#deliver({ kind: "message", value: message });
  }

  send(message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new UpstreamFailure("closed"));
    const msg = message as JsonObject;
    const id = typeof msg.method === "string" && isRequestId(msg.id) ? msg.id : undefined;
    if (id !== undefined) {
      this.#open.set(idKey(id), id);
      if (msg.method === "initialize") this.#initializeIds.add(idKey(id));
    }
    this.#transport.send(message as unknown as JSONRPCMessage).catch((error: unknown) => {
      if (id === undefined) {
        this.#debug("a notification or an answer did not reach the upstream server");
        return;
      }
      this.#sendFailed(id, error);
    });
    return Promise.resolve();
  }

  #sendFailed(id: RequestId, error: unknown): void {
    if (this.#closed) return;
    if (error instanceof UpstreamFailure) return this.#fail(id, error);
    const status = httpStatusOf(error);
    if (status === 404 && this.#transport.sessionId !== undefined) {
      // The session expired: the link ends, each request gets `closed`.
      this.#debug("the upstream server does not know the session (HTTP status 404)");
      this.#fail(id, new UpstreamFailure("closed", { status }));
      this.#lose();
      return;
    }
    const facts = status === undefined ? {} : { status };
    this.#fail(id, new UpstreamFailure("transport_failed", facts));
  }

  #fail(id: RequestId, failure: UpstreamFailure): void {
    if (this.#open.delete(idKey(id))) void this.#deliver({ kind: "failed", id, failure });
  }

  /** The body of a request's response ended: without its response, the request fails. */
  #bodyEnd(id: RequestId, failure: UpstreamFailure | undefined): void {
    if (failure) return this.#fail(id, failure);
    setTimeout(() => {
      if (this.#open.has(idKey(id))) this.#fail(id, new UpstreamFailure("transport_failed"));
    }, BODY_END_GRACE_MS);
  }

  /** The session is gone: no DELETE, the link ends. */
  #lose(): void {
    if (this.#closing) return;
    this.#closing = this.#transport.close().catch(() => {}).finally(() => {
      this.#closed = true;
      this.#http.close();
      this.#end({ kind: "closed" });
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      // The DELETE of the session (a 405 is a server that keeps it), with a deadline.
      await withDeadline(this.#transport.terminateSession(), DELETE_GRACE_MS);
      await this.#transport.close().catch(() => {});
      this.#http.close();
      this.#end({ kind: "closed" });
    })();
    return this.#closing;
  }
}

/**
 * Makes the link of an upstream server of revision 2025-11-25 at a URL.
 * It rejects with `connect_failed` when the HTTP client cannot be made.
 */
export async function connectLegacyHttp(options: LegacyHttpOptions): Promise<UpstreamLink> {
  let link: LegacyHttpLink;
  try {
    link = new LegacyHttpLink(options);
  } catch {
    throw new UpstreamFailure("connect_failed");
  }
  return await link.start();
}
