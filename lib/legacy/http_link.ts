/**
 * The link of an upstream server at a URL that speaks revision 2025-11-25:
 * the Streamable HTTP transport of that revision, by the v1 SDK's
 * `StreamableHTTPClientTransport` (`sdk_transport.ts`). It keeps the
 * `Mcp-Session-Id` of the initialize response, sends `MCP-Protocol-Version`
 * once the initialize result names it, opens the GET stream after
 * `notifications/initialized` (`get_stream.ts`: again after each loss, for
 * as long as the session lives), and DELETEs the session at the close.
 *
 * Why the SDK's transport: it is the reference implementation of this wire
 * (sessions, resumption, same-origin redirects). What this module adds: the
 * fetch of {@linkcode boundedFetch} (the bridge's HTTP client, the sign-in,
 * `--max-response-bytes`), the failure of one request by its id (a status, a
 * body over the limit or cut off: the SDK only reports such an error, for no
 * request), and the errors without the body or the URL that the SDK's
 * messages hold.
 *
 * A lost session (a 404 for it, or a connection that failed) fails each
 * request in flight once, and a new session starts behind the client with
 * its initialize params, its log level and its subscriptions
 * (`session_setup.ts`); until then a request fails at once.
 *
 * @module
 */

import { type LinkFetch, linkFetch, type SendMeta } from "../http/post_transport.ts";
import { onceWarn } from "../http/proxy_refusal.ts";
import { isRepeatable } from "../http/repeatable.ts";
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
import type { TokenSource } from "../http/token_source.ts";
import {
  DEFAULT_RENEW,
  GetStream,
  isConnectionFailure,
  type RenewOptions,
  type SessionLoss,
} from "./get_stream.ts";
import { boundedFetch } from "../http/bounded_fetch.ts";
import { isInitializeResult } from "./initialize.ts";
import { OpenRequests } from "./open_requests.ts";
import { OwnRequests } from "./own_requests.ts";
import {
  failureKindOf,
  sendFailureOf,
  type SessionTransport,
  sessionTransport,
  withDeadline,
} from "./sdk_transport.ts";
import { renewSession } from "./renewal.ts";
import { SessionSetup } from "./session_setup.ts";

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
  /** The warn line of a refusal of the proxy (`http/proxy_refusal.ts`), once per link. */
  readonly warn?: (message: string) => void;
  /** The fetch under the bridge's own (tests). */
  readonly fetch?: (url: URL, init: RequestInit, meta: SendMeta) => Promise<Response>;
  /** False with `--no-hinted-resend`: no tools/call is repeatable by its tool's hints. */
  readonly hintedResend?: boolean;
  /** How long an idle HTTP/1.1 connection stays (the limit `http_pool_idle_ms`). */
  readonly poolIdleMs?: number;
  /** The info line of a new session (the Output channel). */
  readonly info?: (message: string) => void;
  /** The waits and the time limit of a new session; the bridge's limits by default. */
  readonly renew?: RenewOptions;
}

export type { RenewOptions };

/** How long the close waits for the DELETE of the session. */
const DELETE_GRACE_MS = 1000;
/**
 * How long after the end of a response's body its response may still be on
 * its way through the SDK's SSE parser before the request fails.
 */
const BODY_END_GRACE_MS = 50;

/**
 * The state of the link: before the first initialize result, with a live
 * session, or between a lost session and the next.
 */
type LinkState = "new" | "live" | "renewing";

/** What the transport saw when the GET stream (or a new session) found no connection. */
const AWAY = "the connection to the upstream server failed";

/** The id prefix of the link's own requests (the initialize and the setup of a new session). */
const OWN_ID_PREFIX = "bridge-session-";

class LegacyHttpLink implements UpstreamLink {
  readonly isRemote = true;
  readonly ended: Promise<LinkEnd>;
  readonly nextSignIn?: () => Promise<void>;
  #end!: (end: LinkEnd) => void;
  readonly #o: LegacyHttpOptions;
  readonly #renew: RenewOptions;
  /** The transport of the current session. */
  #transport: SessionTransport;
  #get: GetStream | undefined;
  /** The HTTP clients of the link (`linkFetch`: HTTP/2, or HTTP/1.1 kept alive). */
  readonly #http: LinkFetch;
  /** The fetch of the link: its HTTP clients, the sign-in, `--max-response-bytes`. */
  readonly #fetch: typeof fetch;
  readonly #debug: (message: string) => void;
  #sink: FrameSink | undefined;
  #early: UpstreamFrame[] = [];
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #stop = new AbortController();
  #state: LinkState = "new";
  /** What a request gets while the link has no session. */
  #away = new UpstreamFailure("transport_failed");
  /** The requests of the client without a response yet. */
  readonly #open = new OpenRequests();
  readonly #initializeIds = new Set<string>();
  readonly #setup = new SessionSetup();
  /** The requests of the server in the current session that the client has not answered. */
  readonly #asked = new Set<string>();
  /** The client sent notifications/initialized: a new session gets it too. */
  #clientInitialized = false;
  readonly #own = new OwnRequests(OWN_ID_PREFIX);

  constructor(options: LegacyHttpOptions) {
    this.#o = options;
    this.#renew = options.renew ?? DEFAULT_RENEW;
    this.ended = new Promise((resolve) => this.#end = resolve);
    this.#debug = options.debug ?? (() => {});
    const source = options.tokenSource;
    if (source) this.nextSignIn = () => source.nextSignIn();
    this.#http = linkFetch({
      ...(options.caCerts && { caCerts: options.caCerts }),
      ...(options.debug && { debug: options.debug }),
      ...(options.poolIdleMs !== undefined && { poolIdleMs: options.poolIdleMs }),
      refused: onceWarn(options.warn, Deno.env.get("SANDBOX_RUNTIME") === "1"),
    });
    const hints = options.hintedResend === false ? undefined : this.#open.hints;
    this.#fetch = boundedFetch({
      maxResponseBytes: options.maxResponseBytes,
      ...(source && { tokenSource: source }),
      fetch: options.fetch ?? ((url, init, meta) => this.#http.fetch(url, init, meta)),
      repeatable: (request) => isRepeatable(request, hints),
      cancelled: (id) => this.#open.signal(id),
      onBodyEnd: (id, failure, unanswered) => this.#bodyEnd(id, failure, unanswered),
    });
    this.#transport = this.#newTransport();
  }

  /** A transport of the SDK for a session. */
  #newTransport(): SessionTransport {
    return sessionTransport({
      url: this.#o.url,
      headers: this.#o.headers ?? [],
      fetch: this.#fetch,
      onMessage: (message, transport) => this.#onMessage(message, transport),
      debug: this.#debug,
    });
  }

  /** The link is ready at once (the transport sends nothing before the first message). */
  start(): Promise<this> {
    return Promise.resolve(this);
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

  #onMessage(message: JsonObject, transport: SessionTransport): void {
    const id = message.id;
    const response = typeof message.method !== "string" && isRequestId(id);
    if (response && this.#own.answer(id, message)) return;
    if (transport !== this.#transport || this.#state === "renewing") {
      this.#debug("dropped a message of a lost session");
      return;
    }
    if (typeof message.method === "string" && isRequestId(id)) this.#asked.add(idKey(id));
    if (response) {
      const key = idKey(id);
      // A request that already failed gets no second answer.
      if (!this.#open.answered(id, message)) {
        this.#debug("dropped a response to no request in flight");
        return;
      }
      this.#setup.answered(message);
      if (this.#initializeIds.delete(key) && isInitializeResult(message.result)) {
        transport.setProtocolVersion(String(message.result.protocolVersion));
        if (this.#state === "new") this.#state = "live";
      }
    }
    void this.#deliver({ kind: "message", value: message });
  }

  send(message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new UpstreamFailure("closed"));
    const msg = message as JsonObject;
    const id = typeof msg.method === "string" && isRequestId(msg.id) ? msg.id : undefined;
    if (id !== undefined) {
      this.#open.add(id, msg.method as string);
      if (this.#state === "renewing") {
        // No session: the request fails at once, with the cause of the loss.
        const failure = this.#away;
        queueMicrotask(() => this.#fail(id, failure));
        return Promise.resolve();
      }
      if (msg.method === "initialize") this.#initializeIds.add(idKey(id));
      this.#setup.sent(msg);
    } else if (this.#state === "renewing") {
      this.#debug("a notification or an answer was dropped: the session is lost");
      return Promise.resolve();
    } else if (typeof msg.method !== "string" && isRequestId(msg.id)) {
      // An answer goes only to the session that asked: another one may use the same id.
      if (!this.#asked.delete(idKey(msg.id))) {
        this.#debug("dropped an answer to a request of a lost session");
        return Promise.resolve();
      }
    }
    if (msg.method === "notifications/cancelled" && isObject(msg.params)) {
      // The request's POST stops (the cancellation still goes): no resend after a time limit.
      const requestId = msg.params.requestId;
      if (isRequestId(requestId)) this.#open.cancel(requestId);
    }
    const initialized = msg.method === "notifications/initialized";
    if (initialized) this.#clientInitialized = true;
    const transport = this.#transport;
    transport.send(message as unknown as JSONRPCMessage).then(() => {
      if (initialized && transport === this.#transport) this.#openGet(transport);
    }, (error: unknown) => {
      if (id !== undefined) return this.#sendFailed(id, error, transport);
      this.#debug("a notification or an answer did not reach the upstream server");
      if (isConnectionFailure(error)) {
        this.#lose(transport, "connection", sendFailureOf(error, false).failure);
      }
    });
    return Promise.resolve();
  }

  #sendFailed(id: RequestId, error: unknown, transport: SessionTransport): void {
    if (this.#closed) return;
    const live = transport.sessionId !== undefined && this.#state === "live";
    const { failure, loss } = sendFailureOf(error, live);
    // A lost session: this request and each one in flight fail with the cause of the loss.
    this.#fail(id, failure);
    if (loss) this.#lose(transport, loss, failure);
  }

  #fail(id: RequestId, failure: UpstreamFailure): void {
    if (!this.#open.close(id)) return;
    this.#setup.failed(id);
    void this.#deliver({ kind: "failed", id, failure });
  }

  /** The body of a response ended: without its response, the request fails with `unanswered`. */
  #bodyEnd(id: RequestId, failure: UpstreamFailure | undefined, unanswered: UpstreamFailure): void {
    if (this.#own.bodyEnd(id, failure, BODY_END_GRACE_MS)) return;
    if (failure) return this.#fail(id, failure);
    setTimeout(() => {
      if (this.#open.has(id)) this.#fail(id, unanswered);
    }, BODY_END_GRACE_MS);
  }

  /** Opens the GET stream of the session of `transport`. */
  #openGet(transport: SessionTransport): void {
    if (this.#closed || this.#get) return;
    this.#get = new GetStream({
      url: this.#o.url,
      fetch: this.#fetch,
      headers: () => {
        const headers = new Headers(this.#o.headers?.map(([k, v]) => [k, v]) ?? []);
        if (transport.sessionId) headers.set("mcp-session-id", transport.sessionId);
        const version = transport.protocolVersion;
        if (version) headers.set("mcp-protocol-version", version);
        return headers;
      },
      maxEventBytes: this.#o.maxResponseBytes,
      waits: this.#renew,
      onMessage: (message) => this.#onMessage(message, transport),
      onLoss: (loss, status) =>
        this.#lose(
          transport,
          loss,
          loss === "session"
            ? new UpstreamFailure("closed", status === undefined ? {} : { status })
            : new UpstreamFailure("transport_failed", { transport: AWAY }),
        ),
      debug: this.#debug,
    });
    this.#get.start();
  }

  /**
   * The session of `transport` is lost: each request in flight fails once
   * with `away` (a request until the next session too), the GET stream
   * closes, and a new session starts.
   */
  #lose(transport: SessionTransport, loss: SessionLoss, away: UpstreamFailure): void {
    if (this.#closed || this.#state !== "live" || transport !== this.#transport) return;
    this.#state = "renewing";
    this.#away = away;
    this.#debug(
      loss === "session"
        ? `the upstream server does not know the session (HTTP status ${away.status})`
        : "the connection to the upstream server failed",
    );
    for (const id of this.#open.ids()) this.#fail(id, away);
    this.#initializeIds.clear();
    this.#asked.clear();
    void this.#get?.close();
    this.#get = undefined;
    // After a failed connection the server may still hold the session: its DELETE, at most once.
    const ending = loss === "connection"
      ? withDeadline(transport.terminateSession(), DELETE_GRACE_MS)
      : Promise.resolve();
    void ending.then(() => transport.close()).catch(() => {});
    void this.#renewSession(loss, away.status);
  }

  /** The next session, and what the client set up in it; its info line. */
  async #renewSession(loss: SessionLoss, status: number | undefined): Promise<void> {
    const transport = await renewSession(loss, {
      newTransport: () => this.#newTransport(),
      own: this.#own,
      params: this.#setup.initializeParams ?? {},
      initialized: this.#clientInitialized,
      options: this.#renew,
      signal: this.#stop.signal,
      onConnectionFailure: () =>
        this.#away = new UpstreamFailure("transport_failed", { transport: AWAY }),
      debug: this.#debug,
    });
    if (!transport) return;
    this.#transport = transport;
    this.#state = "live";
    if (this.#clientInitialized) this.#openGet(transport);
    for (const { method, params } of this.#setup.restore()) {
      this.#own.request(transport, method, params, this.#renew.initializeTimeoutMs).catch(
        (error) => this.#debug(`${method} of the new session failed (${failureKindOf(error)})`),
      );
    }
    this.#o.info?.(
      loss === "session"
        ? `a new session of the upstream server started: it did not know the session (HTTP status ${status})`
        : "a new session of the upstream server started: the connection failed, and the server answers again",
    );
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      this.#stop.abort();
      await this.#get?.close();
      const transport = this.#transport;
      // The DELETE of the session (a 405 is a server that keeps it), with a deadline.
      if (this.#state !== "renewing") {
        await withDeadline(transport.terminateSession(), DELETE_GRACE_MS);
      }
      await transport.close().catch(() => {});
      this.#own.close();
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
