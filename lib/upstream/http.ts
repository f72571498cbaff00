/**
 * The HTTP link: the upstream server is at a URL and speaks the Streamable
 * HTTP transport of revision 2026-07-28. Each message is its own POST; the
 * response of a request is one JSON object or an SSE stream of that request
 * (progress, log messages, events, then the result). There are no sessions
 * and no GET stream; `subscriptions/listen` is a request like the others.
 *
 * What this takes from the SDK v2 client transport
 * (`StreamableHTTPClientTransport` of `@modelcontextprotocol/client` 2.4.0):
 * the headers of a POST and their values, the media types it accepts, a 400
 * with the JSON-RPC error of the request delivered as that error, and a
 * 202 for a notification, and a 307/308 followed only within the origin.
 * What it does not take, and why: the transport reads a JSON body and each
 * SSE event without a limit, validates each message against the schemas
 * (the bridge repairs results instead), keeps sessions and a GET stream
 * (revision 2026-07-28 has neither), and owns the OAuth flow (here a
 * {@linkcode TokenSource} does).
 *
 * Every POST goes through Deno's fetch and the send policy of the HTTP
 * transport (`http/post_transport.ts`, `http/send_once.ts`): a request whose
 * bytes may have reached the server gets the failure of its cause, unless
 * it is repeatable (`http/repeatable.ts`: by its method, or by the hints of
 * its tool in the last tools/list, which the link keeps): such a request
 * goes once more also when the network cuts the body of its response before
 * the response message (the link's own resend). The POSTs of
 * answers and notifications are bounded ({@linkcode MAX_OWN_POSTS}), so a
 * flood of server requests on a stream cannot open a connection each.
 *
 * A failure never names the URL (its path or query can hold a key), a
 * header value or a token: it carries its kind, the HTTP status and the
 * message of a JSON-RPC error of the body.
 *
 * @module
 */

import {
  isObject,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { UpstreamFailure } from "./failure.ts";
import { mirroredHeaders, ToolHeaders } from "./http_headers.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink, UrlPrompt } from "./link.ts";
import { untilAborted } from "../jsonrpc/abortable.ts";
import { PostLimiter } from "../http/post_limiter.ts";
import {
  fetchTransport,
  type PostTransport,
  postWithinOrigin,
  type SendMeta,
} from "../http/post_transport.ts";
import {
  bodyCut,
  bodyMayCarryResponse,
  isResponseOf,
  readOwnResponse,
  readRequestResponse,
  requestFailure,
} from "./http_response.ts";
import { isRepeatable, ToolHints } from "../http/repeatable.ts";
import { sendWithChallenges, type TokenSource } from "../http/token_source.ts";

/** Options of {@linkcode createHttpLink}. */
export interface HttpLinkOptions {
  /** The URL of the upstream server; it never reaches a log line or an error. */
  readonly url: URL;
  /** The headers of `--header-env`, on every POST. */
  readonly headers?: readonly (readonly [string, string])[];
  /** The largest JSON response and the largest event of a stream. */
  readonly maxResponseBytes: number;
  /** How a POST goes (default: fetch with an HTTP client of the link's own). */
  readonly transport?: PostTransport;
  /** The POSTs of answers and notifications at once (default {@linkcode MAX_OWN_POSTS}). */
  readonly maxOwnPosts?: number;
  /** The time limit of each of those POSTs (default {@linkcode OWN_POST_MS}). */
  readonly ownPostTimeoutMs?: number;
  /** The sign-in; without it a 401 or 403 fails the request. */
  readonly tokenSource?: TokenSource;
  /**
   * A tools/call of a tool that the last tools/list marked read-only or
   * idempotent may go once more after a failure of the transport (default
   * true; false: `--no-hinted-resend`).
   */
  readonly hintedResend?: boolean;
  /** A debug line for what the link drops (it names no URL). */
  readonly debug?: (message: string) => void;
}

/** How long the close waits for the notifications in flight (a cancellation). */
const CLOSE_GRACE_MS = 250;
/**
 * The POSTs of answers and notifications in flight at once: over HTTP/1.1
 * each is a connection. A flood of server requests waits for them.
 */
export const MAX_OWN_POSTS = 16;
/** The time limit of a POST of an answer or a notification (its 202). */
export const OWN_POST_MS = 30_000;

/** One request in flight: its fetch can be aborted. */
interface Exchange {
  readonly controller: AbortController;
}

/** What a request saw of its exchange so far. */
interface Seen {
  /** The status of the last response whose head came. */
  status?: number;
  /** Its body, of a 2xx with the response, is being read: a failure now is a cut body. */
  reading: boolean;
  /** The client got a message of the request (a progress, a log message, a request). */
  delivered: boolean;
  /** The send policy sent the request once more. */
  resent: boolean;
}

class HttpLink implements UpstreamLink {
  readonly isRemote = true;
  readonly ended: Promise<LinkEnd>;
  readonly #o: HttpLinkOptions;
  readonly #transport: PostTransport;
  #sink: FrameSink | undefined;
  /** Frames that came before `read` (none in practice: the client reads at once). */
  #early: UpstreamFrame[] = [];
  #closed = false;
  #closing: Promise<void> | undefined;
  #close!: () => void;
  #exchanges = new Map<Json, Exchange>();
  /** POSTs of notifications and responses, awaited at the close. */
  #posts = new Set<Promise<void>>();
  /** The bound of those POSTs. */
  readonly #ownPosts: PostLimiter;
  /** The tools/list requests in flight: their results give the Mcp-Param headers. */
  #toolLists = new Set<Json>();
  #tools = new ToolHeaders();
  /** The read-only and idempotent tools of the last tools/list (none with `--no-hinted-resend`). */
  readonly #hints: ToolHints | undefined;

  /** Only with a sign-in: a listen stream refused with 401 or 403 waits for it. */
  readonly nextSignIn?: () => Promise<void>;
  readonly setUrlPrompt?: (prompt: UrlPrompt | undefined) => void;

  constructor(options: HttpLinkOptions) {
    this.#o = options;
    this.#transport = options.transport ?? fetchTransport();
    this.#ownPosts = new PostLimiter(options.maxOwnPosts ?? MAX_OWN_POSTS);
    this.#hints = options.hintedResend === false ? undefined : new ToolHints();
    const source = options.tokenSource;
    if (source) {
      this.nextSignIn = () => source.nextSignIn();
      this.setUrlPrompt = (prompt) => source.setUrlPrompt(prompt);
    }
    this.ended = new Promise((resolve) => {
      this.#close = () => resolve({ kind: "closed" });
    });
  }

  read(onFrame: FrameSink): Promise<void> {
    this.#sink = onFrame;
    for (const frame of this.#early.splice(0)) void onFrame(frame);
    return this.ended.then(() => {});
  }

  send(message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new UpstreamFailure("closed"));
    const msg = message as JsonObject;
    const method = msg.method;
    if (typeof method === "string" && Object.hasOwn(msg, "id")) {
      const id = msg.id ?? null;
      const exchange: Exchange = { controller: new AbortController() };
      this.#exchanges.set(id, exchange);
      if (method === "tools/list") this.#toolLists.add(id);
      this.#request(msg, id, exchange).finally(() => {
        if (this.#exchanges.get(id) === exchange) this.#exchanges.delete(id);
        this.#toolLists.delete(id);
      });
      return Promise.resolve();
    }
    if (method === "notifications/cancelled") {
      // The cancellation is its own POST, and the request's fetch stops now:
      // no frame of a cancelled request reaches the client.
      const params = isObject(msg.params) ? msg.params : undefined;
      const id = params?.requestId;
      const exchange = id === undefined ? undefined : this.#exchanges.get(id);
      if (exchange) {
        this.#exchanges.delete(id!);
        exchange.controller.abort();
      }
    }
    const post = this.#ownPosts.run(() => this.#notify(msg)).finally(() =>
      this.#posts.delete(post)
    );
    this.#posts.add(post);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    for (const exchange of this.#exchanges.values()) exchange.controller.abort();
    this.#exchanges.clear();
    this.#close();
    // A notification in flight (a cancellation) gets a short time to leave.
    let timer: ReturnType<typeof setTimeout> | undefined;
    this.#closing = Promise.race([
      Promise.allSettled([...this.#posts]).then(() => {}),
      new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_GRACE_MS)),
    ]).finally(() => {
      clearTimeout(timer);
      this.#transport.close();
    });
    return this.#closing;
  }

  #deliver(frame: UpstreamFrame, exchange?: Exchange): void | Promise<void> {
    if (this.#closed || exchange?.controller.signal.aborted) return;
    if (!this.#sink) {
      this.#early.push(frame);
      return;
    }
    return this.#sink(frame);
  }

  /**
   * The header fields of one POST, and the token's. The names of
   * `--header-env` never repeat one of these (`http_options.ts` refuses them),
   * so a list is enough.
   */
  #headers(message: JsonObject, token: string | undefined): [string, string][] {
    const headers: [string, string][] = (this.#o.headers ?? []).map(([n, v]) => [n, v]);
    headers.push(["content-type", "application/json"]);
    headers.push(["accept", "application/json, text/event-stream"]);
    // No compression: the limit counts the bytes of the message, and fetch would
    // decode a gzip body whose Content-Length is the compressed one.
    headers.push(["accept-encoding", "identity"]);
    headers.push(...mirroredHeaders(message, (tool) => this.#tools.get(tool)));
    if (token !== undefined) headers.push(["authorization", token]);
    return headers;
  }

  /**
   * One POST, with the token of the token source and its answers to
   * challenges; `extra`: the link's resend, and the callback of the policy's.
   */
  #post(
    message: JsonObject,
    body: string,
    signal: AbortSignal,
    extra: Pick<SendMeta, "again" | "onResend"> = {},
  ): Promise<Response> {
    const meta = {
      repeatable: isRepeatable(message, this.#hints),
      label: typeof message.method === "string" ? message.method : "a message",
      ...extra,
    };
    return sendWithChallenges(
      this.#o.tokenSource,
      signal,
      (token) =>
        postWithinOrigin(this.#transport, this.#o.url, {
          headers: this.#headers(message, token),
          body,
          signal,
          ...meta,
        }),
    );
  }

  /**
   * One request: its POST and its response. A repeatable request whose
   * response the network cut before its response message (`bodyCut`) goes
   * once more, unless the send policy sent it once more already or the
   * client got a message of it (a progress, a log message: a second run
   * would repeat them); any other failure fails it once.
   */
  async #request(message: JsonObject, id: Json, exchange: Exchange): Promise<void> {
    const { signal } = exchange.controller;
    const body = JSON.stringify(message);
    const repeatable = isRepeatable(message, this.#hints);
    const seen: Seen = { reading: false, delivered: false, resent: false };
    for (let again = false;; again = true) {
      try {
        await this.#exchange(message, id, body, exchange, seen, again);
        return;
      } catch (error) {
        if (signal.aborted || this.#closed) return;
        const cut = seen.reading ? bodyCut(error) : undefined;
        if (cut !== undefined && repeatable && !again && !seen.resent && !seen.delivered) {
          this.#o.debug?.(`${message.method}: sent once more after ${cut}`);
          continue;
        }
        const failure = requestFailure(error, seen.status);
        await this.#deliver({ kind: "failed", id: id as RequestId, failure }, exchange);
        return;
      }
    }
  }

  /** One POST of a request (`again`: the link's resend) and its response; `seen` keeps what came. */
  async #exchange(
    message: JsonObject,
    id: Json,
    body: string,
    exchange: Exchange,
    seen: Seen,
    again: boolean,
  ): Promise<void> {
    const { signal } = exchange.controller;
    const meta = { again, onResend: () => seen.resent = true };
    seen.reading = false;
    delete seen.status;
    let response = await this.#post(message, body, signal, meta);
    seen.status = response.status;
    seen.reading = bodyMayCarryResponse(response.status);
    const mayRetry = message.method === "tools/call";
    if (await this.#response(response, id, exchange, seen, mayRetry) === "header_mismatch") {
      // As the SDK v2 client: the server refused the call (400) for Mcp-Param
      // headers that did not match the tool (a call before any tools/list, or
      // after its declarations changed), so it did not run. List the tools
      // again, then send the call once more.
      seen.reading = false;
      await this.#refreshToolHeaders(message, signal).catch(() => {});
      response = await this.#post(message, body, signal, meta);
      seen.status = response.status;
      seen.reading = bodyMayCarryResponse(response.status);
      await this.#response(response, id, exchange, seen, false);
    }
  }

  /**
   * Reads the response of a request and gives its messages to the client
   * (`http_response.ts`).
   */
  #response(
    response: Response,
    id: Json,
    exchange: Exchange,
    seen: Seen,
    mayRetry: boolean,
  ): Promise<"done" | "header_mismatch"> {
    return readRequestResponse(response, {
      id,
      limit: this.#o.maxResponseBytes,
      mayRetry,
      deliver: (message) => {
        seen.delivered = true;
        this.#observe(id, message);
        return this.#deliver({ kind: "message", value: message, via: id as RequestId }, exchange);
      },
      // The wait ends with the exchange (a cancellation, a time limit, the close).
      serverRequest: () =>
        untilAborted(this.#ownPosts.room(), exchange.controller.signal, undefined),
      ...(this.#o.debug && { debug: this.#o.debug }),
    });
  }

  /** Keeps the `x-mcp-header` declarations and the hints of a tools/list result. */
  #observe(id: Json, message: JsonObject): void {
    if (!this.#toolLists.has(id) || !isResponseOf(message, id)) return;
    this.#tools.learn(message.result);
    this.#hints?.learn(message.result);
  }

  /** The link's own tools/list, every page; nothing of it reaches the client. */
  #refreshToolHeaders(call: JsonObject, signal: AbortSignal): Promise<void> {
    return this.#tools.refresh(call, async (list) => {
      const response = await this.#post(list, JSON.stringify(list), signal);
      return readOwnResponse(response, list.id as string, this.#o.maxResponseBytes);
    });
  }

  /** POSTs a notification or a response; the answer (202) has no message. */
  async #notify(message: JsonObject): Promise<void> {
    // A server that never answers the POST of a notification or an answer must
    // not hold a place of the bound for ever: the POST has a time limit.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#o.ownPostTimeoutMs ?? OWN_POST_MS);
    try {
      const response = await this.#post(
        message,
        JSON.stringify(message),
        controller.signal,
      );
      await response.body?.cancel().catch(() => {});
      if (response.status < 200 || response.status > 299) {
        this.#o.debug?.(
          `the upstream server refused a notification: HTTP status ${response.status}`,
        );
      }
    } catch {
      this.#o.debug?.("a notification did not reach the upstream server");
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Makes the link for a URL. Nothing is sent before the first message: the
 * client of the link exists once this resolves.
 */
export function createHttpLink(options: HttpLinkOptions): Promise<UpstreamLink> {
  return Promise.resolve(new HttpLink(options));
}
