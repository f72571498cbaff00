/**
 * One link of revision 2026-07-28 shared by several front ends (the sessions
 * of `serve`). Revision 2026-07-28 has no session: every request carries its
 * own client information, capabilities and log level, so one child process
 * or one HTTP link (with one sign-in) can serve every client at once.
 *
 * Each front end gets a {@linkcode UpstreamLink} of its own, and its upstream
 * client runs on it unchanged. The hub gives each request a new id on the
 * shared link, so the ids of two front ends never collide, and maps back
 * what belongs to a request: its response, its failure, its progress (the
 * token is the request's id), the events of a listen stream (the
 * subscription id), and whatever its own HTTP exchange carries (`via`). A
 * log message of no known request (stdio) goes to a front end only when one
 * front end alone has requests in flight that asked for log messages (a
 * level in their `_meta`, its listen stream too); else it is dropped with a
 * debug line: it is never given to a front end that it may not belong to.
 * The requests of the server (ping) are answered here. A shared link that
 * can no longer send (`sendEnded`) fails the later requests of every front
 * end at once; the ones in flight still get their answers.
 *
 * @module
 */

import { isObject, type JsonObject, type Message, type RequestId } from "../jsonrpc/message.ts";
import type { Logger } from "../log.ts";
import { ENVELOPE_KEYS, SUBSCRIPTION_ID_KEY } from "./envelope.ts";
import { UpstreamFailure } from "./failure.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink } from "./link.ts";

/**
 * How long a canceled request still counts as a request that asked for log
 * messages: the server can log for it until it has read the cancellation.
 */
export const CANCEL_LINGER_MS = 5_000;

/** How long the hub waits for the end of a link whose output ended (as the upstream client). */
const END_GRACE_MS = 250;

/** One request of a front end on the shared link. */
interface Entry {
  readonly link: SessionLink;
  /** Its id as the front end's client wrote it. */
  readonly local: number;
  /** It asked for log messages (a level in its `_meta`). */
  readonly logs: boolean;
  /** Its envelope, for a cancellation that the hub sends itself. */
  readonly envelope: JsonObject;
  /** Set once it was canceled: until then it counts for the log messages. */
  lingerUntil?: number;
  /** The timer that removes a canceled request after its linger. */
  lingerTimer?: ReturnType<typeof setTimeout>;
}

/** The envelope keys of a request's `_meta` (a cancellation of the hub carries them too). */
function envelopeOf(meta: JsonObject | undefined): JsonObject {
  const out: JsonObject = {};
  const { protocolVersion, clientInfo, clientCapabilities } = ENVELOPE_KEYS;
  for (const key of [protocolVersion, clientInfo, clientCapabilities]) {
    if (meta && Object.hasOwn(meta, key)) out[key] = meta[key]!;
  }
  return out;
}

/** Options of a {@linkcode LinkHub}. */
export interface LinkHubOptions {
  readonly log: Logger;
  /** {@linkcode CANCEL_LINGER_MS} by default. */
  readonly lingerMs?: number;
  /** The clock of the linger (tests pass their own). */
  readonly now?: () => number;
}

/**
 * The hub of one real link: it reads the link once and routes each frame to
 * the front end whose request it belongs to.
 */
export class LinkHub {
  readonly link: UpstreamLink;
  /** Resolves with the end of the real link, once the hub has read it all. */
  readonly ended: Promise<LinkEnd>;
  /**
   * Resolves when the real link can no longer send while it runs on (see
   * {@linkcode UpstreamLink.sendEnded}); undefined for a link that cannot be
   * half closed.
   */
  readonly sendEnded: Promise<UpstreamFailure> | undefined;
  readonly #o: LinkHubOptions;
  readonly #links = new Set<SessionLink>();
  readonly #requests = new Map<number, Entry>();
  #nextId = 1;
  #end: LinkEnd | undefined;
  /** Set once the real link can no longer send: the failure of each later send. */
  #sendFailure: UpstreamFailure | undefined;

  constructor(link: UpstreamLink, options: LinkHubOptions) {
    this.link = link;
    this.#o = options;
    this.sendEnded = link.sendEnded?.then((failure) => this.#sendFailure = failure);
    this.ended = this.#read();
  }

  /** Set once the real link can no longer send: the failure of its later requests. */
  get sendFailure(): UpstreamFailure | undefined {
    return this.#sendFailure;
  }

  /** The front ends on the link now. */
  get size(): number {
    return this.#links.size;
  }

  /** A link of a front end of its own; its end is the hub's, or its own close. */
  attach(onClose: (link: SessionLink) => void): SessionLink {
    if (this.#end) throw new UpstreamFailure("closed");
    const link = new SessionLink(this, (closed) => {
      this.#links.delete(closed);
      this.#cancelAll(closed);
      onClose(closed);
    });
    this.#links.add(link);
    return link;
  }

  async #read(): Promise<LinkEnd> {
    try {
      await this.link.read((frame) => this.#route(frame));
    } catch {
      // A read error ends the link like its end.
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), END_GRACE_MS);
    });
    let end = await Promise.race([this.link.ended, grace]);
    clearTimeout(timer);
    if (!end) {
      this.link.close().catch(() => {});
      end = { kind: "closed" };
    }
    this.#end = end;
    for (const entry of this.#requests.values()) clearTimeout(entry.lingerTimer);
    this.#requests.clear();
    for (const link of [...this.#links]) link.end(end);
    this.#links.clear();
    return end;
  }

  /** Sends a message of a front end's client, its ids made the hub's. */
  send(from: SessionLink, message: Message): Promise<void> {
    if (this.#end) return Promise.reject(new UpstreamFailure("closed"));
    if (this.#sendFailure) return Promise.reject(this.#sendFailure);
    const msg = message as JsonObject;
    if (typeof msg.method === "string" && typeof msg.id === "number") {
      const id = this.#nextId++;
      const params = isObject(msg.params) ? msg.params : {};
      const meta = isObject(params._meta) ? { ...params._meta } : undefined;
      if (meta && meta.progressToken === msg.id) meta.progressToken = id;
      const entry: Entry = {
        link: from,
        local: msg.id,
        logs: meta !== undefined && typeof meta[ENVELOPE_KEYS.logLevel] === "string",
        envelope: envelopeOf(meta),
      };
      this.#requests.set(id, entry);
      from.local.set(msg.id, id);
      const out = { ...msg, id, params: meta ? { ...params, _meta: meta } : params };
      return this.link.send(out as Message).catch((error) => {
        this.#forget(id);
        throw error;
      });
    }
    if (msg.method === "notifications/cancelled" && isObject(msg.params)) {
      const local = msg.params.requestId;
      const id = typeof local === "number" ? from.local.get(local) : undefined;
      if (id === undefined) return Promise.resolve(); // answered already: nothing to cancel
      this.#linger(id);
      const params = { ...msg.params, requestId: id };
      return this.link.send({ ...msg, params } as unknown as Message);
    }
    if (typeof msg.method === "string" && !Object.hasOwn(msg, "id")) {
      return this.link.send(message);
    }
    // The server's requests are answered by the hub: a front end answers none.
    return Promise.resolve();
  }

  /** A canceled request counts for the log messages a little longer, then goes. */
  #linger(id: number): void {
    const entry = this.#requests.get(id);
    if (!entry || entry.lingerUntil !== undefined) return;
    const ms = this.#o.lingerMs ?? CANCEL_LINGER_MS;
    entry.lingerUntil = this.#now() + ms;
    entry.link.local.delete(entry.local);
    entry.lingerTimer = setTimeout(() => {
      if (this.#requests.get(id) === entry) this.#requests.delete(id);
    }, ms);
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** The requests of a front end that closed: each is canceled upstream. */
  #cancelAll(link: SessionLink): void {
    for (const [local, id] of [...link.local]) {
      const entry = this.#requests.get(id);
      this.#linger(id);
      link.local.delete(local);
      if (this.#end || this.#sendFailure || !entry) continue;
      const params = {
        requestId: id,
        reason: "the client closed the connection",
        _meta: entry.envelope,
      };
      this.link.send({ jsonrpc: "2.0", method: "notifications/cancelled", params })
        .catch(() => {});
    }
  }

  /** The request `id` ended (its response or failure): its entry goes. */
  #take(id: unknown): Entry | undefined {
    if (typeof id !== "number") return undefined;
    const entry = this.#requests.get(id);
    if (entry) this.#forget(id);
    return entry;
  }

  #forget(id: number): void {
    const entry = this.#requests.get(id);
    if (!entry) return;
    clearTimeout(entry.lingerTimer);
    this.#requests.delete(id);
    if (entry.link.local.get(entry.local) === id) entry.link.local.delete(entry.local);
  }

  #route(frame: UpstreamFrame): void {
    if (frame.kind === "failed") {
      const entry = this.#take(frame.id);
      entry?.link.deliver({ kind: "failed", id: entry.local, failure: frame.failure });
      return;
    }
    if (frame.kind === "invalid") {
      const entry = this.#take(frame.id);
      if (entry) entry.link.deliver({ kind: "invalid", id: entry.local });
      else this.#o.log.debug("dropped an upstream line that is not a message");
      return;
    }
    const msg = frame.value;
    const method = msg.method;
    if (typeof method !== "string") {
      const entry = this.#take(msg.id);
      if (entry) entry.link.deliver({ kind: "message", value: { ...msg, id: entry.local } });
      else this.#o.log.debug(`dropped an upstream response for the unknown id ${String(msg.id)}`);
      return;
    }
    if (Object.hasOwn(msg, "id")) {
      this.#answerServerRequest(msg.id, method);
      return;
    }
    this.#notification(method, isObject(msg.params) ? msg.params : undefined, frame.via);
  }

  #notification(method: string, params: JsonObject | undefined, via: RequestId | undefined): void {
    const message = (value: JsonObject, entry: Entry) =>
      entry.link.deliver({
        kind: "message",
        value: { jsonrpc: "2.0", method, ...(params && { params: value }) },
        ...(via !== undefined && { via: entry.local }),
      });
    const viaEntry = typeof via === "number" ? this.#requests.get(via) : undefined;
    const token = method === "notifications/progress" ? params?.progressToken : undefined;
    const progressEntry = typeof token === "number" ? this.#requests.get(token) : undefined;
    if (progressEntry && params) {
      return message({ ...params, progressToken: progressEntry.local }, progressEntry);
    }
    const meta = isObject(params?._meta) ? params._meta : undefined;
    const subscription = meta?.[SUBSCRIPTION_ID_KEY];
    const stream = typeof subscription === "number" ? this.#requests.get(subscription) : undefined;
    if (stream && params && meta) {
      const value = { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: stream.local } };
      return message(value, stream);
    }
    if (viaEntry) return message(params ?? {}, viaEntry);
    // The one-owner rule is for a log message of no known exchange (stdio) only: one on
    // the exchange of a request that is over belonged to that request, never to another.
    if (method === "notifications/message" && params && via === undefined) {
      const owner = this.#onlyLogOwner();
      if (owner) {
        owner.deliver({ kind: "message", value: { jsonrpc: "2.0", method, params } });
        return;
      }
      this.#o.log.debug(
        "dropped a log message of the upstream server: it belongs to no one client session",
      );
      return;
    }
    this.#o.log.debug(
      method === "notifications/message"
        ? "dropped a log message of the upstream server: its request is over"
        : `dropped the upstream notification ${method}: it belongs to no request`,
    );
  }

  /** The one front end whose requests in flight asked for log messages, if only one did. */
  #onlyLogOwner(): SessionLink | undefined {
    let owner: SessionLink | undefined;
    const now = this.#now();
    for (const entry of this.#requests.values()) {
      if (!entry.logs || (entry.lingerUntil !== undefined && entry.lingerUntil < now)) continue;
      if (owner && owner !== entry.link) return undefined;
      owner = entry.link;
    }
    return owner;
  }

  /** Revision 2026-07-28 has no requests from the server; only ping gets a result. */
  #answerServerRequest(id: unknown, method: string): void {
    if (typeof id !== "number" && typeof id !== "string") return;
    const reply: Message = method === "ping"
      ? { jsonrpc: "2.0", id, result: {} }
      : { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
    this.link.send(reply).catch(() => {});
  }

  /** Closes the real link. */
  close(): Promise<void> {
    return this.link.close();
  }
}

/** The link of one front end on a {@linkcode LinkHub}. */
export class SessionLink implements UpstreamLink {
  readonly isRemote: boolean;
  readonly untimed?: boolean;
  readonly ended: Promise<LinkEnd>;
  /** The hub's: the shared link can no longer send (see {@linkcode UpstreamLink.sendEnded}). */
  readonly sendEnded?: Promise<UpstreamFailure>;
  readonly nextSignIn?: () => Promise<void>;
  /** Its requests in flight: its client's id → the hub's id. */
  readonly local = new Map<number, number>();
  readonly #hub: LinkHub;
  readonly #onClose: (link: SessionLink) => void;
  #sink: FrameSink | undefined;
  #early: UpstreamFrame[] = [];
  #end!: (end: LinkEnd) => void;
  #closed = false;

  constructor(hub: LinkHub, onClose: (link: SessionLink) => void) {
    this.#hub = hub;
    this.#onClose = onClose;
    this.isRemote = hub.link.isRemote;
    if (hub.link.untimed) this.untimed = true;
    if (hub.sendEnded) this.sendEnded = hub.sendEnded;
    const next = hub.link.nextSignIn;
    if (next) this.nextSignIn = () => next.call(hub.link);
    this.ended = new Promise((resolve) => this.#end = resolve);
  }

  read(onFrame: FrameSink): Promise<void> {
    this.#sink = onFrame;
    for (const frame of this.#early.splice(0)) void onFrame(frame);
    return this.ended.then(() => {});
  }

  send(message: Message): Promise<void> {
    if (this.#closed) return Promise.reject(new UpstreamFailure("closed"));
    return this.#hub.send(this, message);
  }

  /**
   * A frame for this front end. Its back pressure stays here: one client that
   * reads slowly must not hold the reader of every other one.
   */
  deliver(frame: UpstreamFrame): void {
    if (this.#closed) return;
    if (!this.#sink) {
      this.#early.push(frame);
      return;
    }
    void this.#sink(frame);
  }

  /** The shared link ended: so does this one. */
  end(end: LinkEnd): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#end(end);
  }

  /** Leaves the shared link: its requests still in flight are canceled upstream. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#onClose(this);
      this.#end({ kind: "closed" });
    }
    return Promise.resolve();
  }
}
