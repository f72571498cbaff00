/**
 * The upstream client: a client of revision 2026-07-28 on top of an
 * {@linkcode UpstreamLink}. It sends server/discover and the forwarded
 * requests with the `_meta` envelope, matches responses, routes progress to
 * its request, cancels, and applies a time limit to each request.
 *
 * Why not the `Client` of SDK v2: it validates each result against the
 * schemas of the revision and rejects results that the bridge must repair
 * and pass on (`nextCursor: null`, a `ttlMs` without `cacheScope`), it
 * caches list results, and its stdio transport probes on a second process.
 * The bridge needs each result as the upstream server wrote it.
 *
 * @module
 */

import {
  type ErrorObject,
  isObject,
  isRequestId,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { Deadlines } from "./deadlines.ts";
import { ENVELOPE_KEYS, SUBSCRIPTION_ID_KEY, UPSTREAM_PROTOCOL_VERSION } from "./envelope.ts";
import { UpstreamFailure } from "./failure.ts";
import { failureOfEnd, type LinkEnd, type UpstreamFrame, type UpstreamLink } from "./link.ts";

/** The progress of the upstream server for one request. */
export interface UpstreamProgress {
  readonly progress: Json | undefined;
  readonly total: Json | undefined;
  readonly message: Json | undefined;
}

/** Options of one upstream request. */
export interface UpstreamRequestOptions {
  /** The time limit of this request; a listen stream has none. */
  readonly timeoutMs?: number;
  /** Aborting it cancels the request upstream; the reason is the cancel reason. */
  readonly signal?: AbortSignal;
  /** When set, the request carries a progress token and gets its progress. */
  readonly onProgress?: (progress: UpstreamProgress) => void;
  /** `_meta` keys of the client that may go upstream (already filtered). */
  readonly meta?: JsonObject;
  /** The level of the client, for `io.modelcontextprotocol/logLevel`. */
  readonly logLevel?: string;
  /**
   * The valid `notifications/message` that the link delivers on this
   * request's own exchange (an SSE stream over HTTP); without it, or on a
   * link that cannot tell (stdio), they go to `onLogMessage` of the client.
   */
  readonly onLog?: (params: JsonObject) => void;
  /**
   * For a listen stream: each notification whose `_meta` names this request as
   * its subscription, on the reader, before the next frame is read.
   */
  readonly onEvent?: (method: string, params: JsonObject) => void;
  /**
   * Revision 2025-11-25 only: the upstream server canceled this request with
   * `notifications/cancelled` (its reason). The request then rejects with
   * `canceled`.
   */
  readonly onCancelled?: (reason: Json | undefined) => void;
}

/**
 * What a client of revision 2025-11-25 (the pass-through of `lib/legacy/`)
 * gets of the upstream server besides the responses and the progress of its
 * requests. Without them, the client speaks revision 2026-07-28.
 */
export interface LegacyHandlers {
  /** A request of the upstream server, with its id as sent. */
  onRequest(id: RequestId, method: string, params: JsonObject | undefined): void;
  /** Each other notification of the upstream server. */
  onNotification(method: string, params: JsonObject | undefined): void;
}

/** What the upstream client needs to know of the client. */
export interface UpstreamClientOptions {
  readonly clientInfo: JsonObject;
  readonly capabilities: JsonObject;
  /** Valid notifications/message of the upstream server. */
  readonly onLogMessage?: (params: JsonObject) => void;
  /** A debug line for what the client drops. */
  readonly debug?: (message: string) => void;
  /**
   * The back pressure of the client's output: a promise while the output
   * waits for the client. The reader of the link awaits it before the next
   * frame, so a flood of the upstream server is not buffered without end.
   */
  readonly hold?: () => Promise<void> | undefined;
  /**
   * How long the reader waits for the end of the link after the upstream
   * server closed its output (a child that closed stdout but runs on is then
   * `closed`, and the link is closed).
   */
  readonly endGraceMs?: number;
}

/** The default of {@linkcode UpstreamClientOptions.endGraceMs}. */
const END_GRACE_MS = 250;

interface Pending {
  resolve(result: Json): void;
  reject(failure: UpstreamFailure): void;
  onProgress: ((progress: UpstreamProgress) => void) | undefined;
  onEvent: ((method: string, params: JsonObject) => void) | undefined;
  onCancelled: ((reason: Json | undefined) => void) | undefined;
  onLog: ((params: JsonObject) => void) | undefined;
}

/** The upstream client of the bridge. */
export class UpstreamClient {
  readonly link: UpstreamLink;
  #options: UpstreamClientOptions;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  /** The time limits of the requests in flight, on one timer. */
  #deadlines = new Deadlines();
  #end: LinkEnd | undefined;
  /** Set once the link can no longer send (see {@linkcode UpstreamLink.sendEnded}). */
  #sendEnded: UpstreamFailure | undefined;
  /** Set: the client speaks revision 2025-11-25 (no envelope, requests of the server). */
  #legacy: LegacyHandlers | undefined;
  /** Resolves when the reader has seen the end of the link. */
  readonly done: Promise<LinkEnd>;

  constructor(link: UpstreamLink, options: UpstreamClientOptions) {
    this.link = link;
    this.#options = options;
    this.done = this.#read();
    link.sendEnded?.then((failure) => this.#sendEnded = failure);
  }

  /**
   * From now on the client speaks revision 2025-11-25 on the same link: no
   * `_meta` envelope, the requests and the notifications of the server go to
   * `handlers`. The pass-through calls it after a server/discover that showed
   * an older upstream server, before its initialize.
   */
  speakLegacy(handlers: LegacyHandlers): void {
    this.#legacy = handlers;
  }

  /** How the link ended, once it did. */
  get end(): LinkEnd | undefined {
    return this.#end;
  }

  /**
   * True once the link can no longer send while it still reads (a child that
   * closed its stdin): each later request fails at once.
   */
  get cannotSend(): boolean {
    return this.#sendEnded !== undefined;
  }

  async #read(): Promise<LinkEnd> {
    try {
      await this.link.read((frame) => {
        this.#onFrame(frame);
        return this.#options.hold?.();
      });
    } catch {
      // A read error ends the link like its end.
    }
    // The output ended. A child that stopped ends the link at once; one that
    // closed its output but runs on is a closed link, and it is stopped.
    const end = await this.#endAfterOutput();
    this.#end = end;
    const failure = failureOfEnd(end);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of pending) entry.reject(failure);
    this.#deadlines.close();
    return end;
  }

  async #endAfterOutput(): Promise<LinkEnd> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#options.endGraceMs ?? END_GRACE_MS);
    });
    const end = await Promise.race([this.link.ended, grace]);
    clearTimeout(timer);
    if (end) return end;
    this.link.close().catch(() => {});
    return { kind: "closed" };
  }

  #onFrame(frame: UpstreamFrame): void {
    if (frame.kind === "failed") {
      if (typeof frame.id === "number") this.#settle(frame.id, (p) => p.reject(frame.failure));
      return;
    }
    if (frame.kind === "invalid") {
      if (typeof frame.id === "number") {
        this.#settle(frame.id, (p) => p.reject(new UpstreamFailure("invalid_response")));
      } else this.#options.debug?.("dropped an upstream line that is not a message");
      return;
    }
    const msg = frame.value;
    const method = msg.method;
    if (typeof method === "string") {
      const params = isObject(msg.params) ? msg.params : undefined;
      if (Object.hasOwn(msg, "id")) {
        const id = msg.id ?? null;
        if (this.#legacy && isRequestId(id)) this.#legacy.onRequest(id, method, params);
        else this.#answerServerRequest(id, method);
        return;
      }
      this.#onNotification(method, params, frame.via);
      return;
    }
    const id = msg.id;
    if (typeof id !== "number") {
      // The bridge's ids are numbers: "1" is not 1.
      this.#options.debug?.("dropped an upstream response whose id is not one of the bridge's");
      return;
    }
    if (Object.hasOwn(msg, "error")) {
      const error = msg.error;
      if (isObject(error) && Number.isInteger(error.code) && typeof error.message === "string") {
        const obj: ErrorObject = error.data === undefined
          ? { code: error.code as number, message: error.message }
          : { code: error.code as number, message: error.message, data: error.data };
        this.#settle(id, (p) => p.reject(new UpstreamFailure("rpc", { error: obj })));
      } else {
        // An error without an error object: the cause rpc of the table.
        this.#settle(id, (p) => p.reject(new UpstreamFailure("rpc")));
      }
    } else if (Object.hasOwn(msg, "result")) {
      this.#settle(id, (p) => p.resolve(msg.result ?? null));
    } else {
      this.#settle(id, (p) => p.reject(new UpstreamFailure("invalid_response")));
    }
  }

  #settle(id: number, action: (pending: Pending) => void): void {
    const entry = this.#pending.get(id);
    if (!entry) {
      this.#options.debug?.(`dropped an upstream response for the unknown id ${id}`);
      return;
    }
    this.#pending.delete(id);
    action(entry);
  }

  #onNotification(method: string, params: JsonObject | undefined, via?: RequestId): void {
    if (method === "notifications/progress") {
      const token = params?.progressToken;
      const entry = typeof token === "number" ? this.#pending.get(token) : undefined;
      entry?.onProgress?.({
        progress: params?.progress,
        total: params?.total,
        message: params?.message,
      });
      return;
    }
    if (this.#legacy) {
      const id = method === "notifications/cancelled" ? params?.requestId : undefined;
      const entry = typeof id === "number" ? this.#pending.get(id) : undefined;
      if (entry) {
        // The server canceled a request of ours: it gets no response.
        this.#settle(id as number, (p) => {
          p.onCancelled?.(params?.reason);
          p.reject(new UpstreamFailure("canceled"));
        });
      } else this.#legacy.onNotification(method, params);
      return;
    }
    if (method === "notifications/message") {
      if (params && typeof params.level === "string" && Object.hasOwn(params, "data")) {
        // The log message of a request's own exchange belongs to that request.
        const onLog = typeof via === "number" ? this.#pending.get(via)?.onLog : undefined;
        if (onLog) onLog(params);
        else this.#options.onLogMessage?.(params);
      }
      return;
    }
    const meta = params?._meta;
    const subscription = isObject(meta) ? meta[SUBSCRIPTION_ID_KEY] : undefined;
    const stream = typeof subscription === "number" ? this.#pending.get(subscription) : undefined;
    if (stream?.onEvent && params) {
      stream.onEvent(method, params);
      return;
    }
    // On a stdio upstream, a notification of no request is dropped.
    this.#options.debug?.(`dropped the upstream notification ${method}`);
  }

  /** Revision 2026-07-28 has no requests from the server; only ping gets a result. */
  #answerServerRequest(id: Json, method: string): void {
    if (!isRequestId(id)) return;
    const reply: Message = method === "ping"
      ? { jsonrpc: "2.0", id, result: {} }
      : { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
    this.link.send(reply).catch(() => {});
  }

  #envelope(extra: JsonObject | undefined, logLevel: string | undefined): JsonObject {
    const meta: JsonObject = { ...extra };
    if (this.#legacy) return meta;
    meta[ENVELOPE_KEYS.protocolVersion] = UPSTREAM_PROTOCOL_VERSION;
    meta[ENVELOPE_KEYS.clientInfo] = this.#options.clientInfo;
    meta[ENVELOPE_KEYS.clientCapabilities] = this.#options.capabilities;
    if (logLevel !== undefined) meta[ENVELOPE_KEYS.logLevel] = logLevel;
    return meta;
  }

  /**
   * server/discover, with its time limit. Version negotiation (SEP-2575):
   * an UnsupportedProtocolVersionError (-32022) whose `data.supported` lists
   * the revision of the bridge gets one more server/discover with it, within
   * the same time limit. Any other answer is the result or the failure.
   */
  async discover(timeoutMs: number, signal?: AbortSignal): Promise<JsonObject> {
    const start = performance.now();
    const once = (limit: number) =>
      this.request(
        "server/discover",
        {},
        signal ? { timeoutMs: limit, signal } : {
          timeoutMs: limit,
        },
      );
    let result: Json;
    try {
      result = await once(timeoutMs);
    } catch (error) {
      if (!offersOurRevision(error)) throw error;
      const left = timeoutMs - (performance.now() - start);
      if (left <= 0) throw new UpstreamFailure("timeout");
      result = await once(left);
    }
    if (!isObject(result)) throw new UpstreamFailure("invalid_response");
    return result;
  }

  /** Sends one request and waits for its raw result. Rejects with {@linkcode UpstreamFailure}. */
  request(method: string, params: JsonObject, options: UpstreamRequestOptions): Promise<Json> {
    if (this.#end) return Promise.reject(failureOfEnd(this.#end));
    if (this.#sendEnded) return Promise.reject(this.#sendEnded);
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(new UpstreamFailure("canceled"));
    const id = this.#nextId++;
    const meta = this.#envelope(options.meta, options.logLevel);
    if (onProgress) meta.progressToken = id;
    // Revision 2025-11-25 has no envelope: an empty `_meta` is not sent.
    const withMeta = this.#legacy && Object.keys(meta).length === 0
      ? params
      : { ...params, _meta: meta };
    const message: Message = { jsonrpc: "2.0", id, method, params: withMeta };

    return new Promise<Json>((resolve, reject) => {
      const deadline = options.timeoutMs === undefined || this.link.untimed
        ? undefined
        : this.#deadlines.add(options.timeoutMs, () => fail("timeout", "the request timed out"));
      const cleanup = () => {
        if (deadline) this.#deadlines.cancel(deadline);
        signal?.removeEventListener("abort", onAbort);
      };
      const fail = (kind: "timeout" | "canceled", reason: string) => {
        if (!this.#pending.delete(id)) return;
        cleanup();
        this.#cancelUpstream(id, reason);
        reject(new UpstreamFailure(kind));
      };
      const onAbort = () => fail("canceled", String(signal?.reason ?? "the request was canceled"));
      this.#pending.set(id, {
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        reject: (failure) => {
          cleanup();
          reject(failure);
        },
        onProgress,
        onEvent: options.onEvent,
        onCancelled: options.onCancelled,
        onLog: options.onLog,
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.link.send(message).catch((error) => {
        // A request that cannot be written fails at once, with the link's cause.
        if (!this.#pending.delete(id)) return;
        cleanup();
        reject(
          this.#end
            ? failureOfEnd(this.#end)
            : error instanceof UpstreamFailure
            ? error
            : new UpstreamFailure("transport_failed"),
        );
      });
    });
  }

  #cancelUpstream(requestId: RequestId, reason: string): void {
    if (this.#end) return;
    const params: JsonObject = this.#legacy
      ? { requestId, reason }
      : { requestId, reason, _meta: this.#envelope(undefined, undefined) };
    this.link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params }).catch(() => {});
  }

  /** Closes the link (and stops the child) and waits for the reader. */
  async close(): Promise<void> {
    await this.link.close();
    await this.done;
  }
}

/** The code of UnsupportedProtocolVersionError (SEP-2575). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** True for -32022 whose `data.supported` lists the revision the bridge speaks. */
function offersOurRevision(error: unknown): boolean {
  if (!(error instanceof UpstreamFailure) || error.kind !== "rpc") return false;
  if (error.error?.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const data = error.error.data;
  const supported = isObject(data) ? data.supported : undefined;
  return Array.isArray(supported) && supported.includes(UPSTREAM_PROTOCOL_VERSION);
}
