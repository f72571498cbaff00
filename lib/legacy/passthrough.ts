/**
 * The pass-through (LEGACY.md): the ready state of a connection whose
 * upstream server speaks revision 2025-11-25, as the client does. The
 * requests of the client go upstream under the ids of the upstream client
 * (so the bridge's own requests never collide with them), with their
 * progress relayed under the client's token and their results repaired by
 * the same result rules as on the modern path. The requests of the upstream
 * server go to the client under bridge ids (`b-1`, ...) through the pending
 * table of the front end, and the answers go back under the upstream's id.
 *
 * @module
 */

import {
  idKey,
  isObject,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import type { LegacyHandlers, UpstreamClient } from "../upstream/client.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { BridgeError } from "../errors/errors.ts";
import { mapUpstreamFailure } from "../errors/failures.ts";
import type { Outcome } from "../input/rounds.ts";
import type { SendToClient } from "../frontend/channel.ts";
import { formatLimit, type Limits, roundTimeoutMs } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import { type Answer, CANCEL_REASONS, type PendingTable } from "../input/pending.ts";
import type { Profile } from "../settings/profile.ts";
import { ProgressRelay } from "../translate/progress.ts";
import { applyResultRules, type ResultContext } from "../translate/results.ts";
import { FORWARDED_METHODS, type IconRule, progressToken } from "../translate/translate.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/** The requests of the upstream server that reach the client. */
export const UPSTREAM_REQUESTS: ReadonlySet<string> = new Set([
  "sampling/createMessage",
  "elicitation/create",
  "roots/list",
  "ping",
]);

/** The notifications of the upstream server that reach the client (cancelled apart). */
export const UPSTREAM_NOTIFICATIONS: ReadonlySet<string> = new Set([
  "notifications/progress",
  "notifications/message",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
  "notifications/elicitation/complete",
]);

/** What the pass-through needs of the front end. */
export interface PassThroughOptions {
  readonly limits: Limits;
  readonly log: Logger;
  readonly profile: Profile;
  /** The front end's table of the bridge's requests to the client. */
  readonly pending: PendingTable;
  /** Where the messages for the client go (with the id of the client's request they belong to). */
  readonly write: SendToClient;
  /** `--tool` and `--ignore-tool`: the tools that tools/list leaves out. */
  readonly tools?: ToolFilter | undefined;
}

/** A request of the upstream server that went to the client. */
interface Asked {
  readonly bridgeId: string;
  readonly upstreamId: RequestId;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * The params of a request of the client for the upstream server: `task`
 * removed, and the client's progress token kept apart (the upstream client
 * sends its own token, so that two requests with the token 0 stay apart).
 */
export function passParams(
  params: Json | undefined,
): { params: JsonObject; meta: JsonObject | undefined; token: Json | undefined } {
  if (!isObject(params)) return { params: {}, meta: undefined, token: undefined };
  const { task: _task, _meta, ...rest } = params;
  if (!isObject(_meta)) return { params: rest, meta: undefined, token: undefined };
  const { progressToken: _token, ...meta } = _meta;
  return {
    params: rest,
    meta: Object.keys(meta).length > 0 ? meta : undefined,
    token: progressToken(_meta),
  };
}

/** The time limit of a request of the client in the pass-through. */
export function passTimeoutMs(limits: Limits, method: string): number {
  return FORWARDED_METHODS.has(method) ? roundTimeoutMs(limits, method, 1) : limits.list_timeout_ms;
}

/** The pass-through of one connection; its handlers get the upstream's messages. */
export class PassThrough implements LegacyHandlers {
  /** What tells it from the ready data of a 2026-07-28 session (`frontend/state.ts`). */
  readonly kind = "passthrough";
  readonly #o: PassThroughOptions;
  #session: UpstreamClient | undefined;
  #results: ResultContext;
  /** The upstream's requests that went to the client, by the key of the upstream id. */
  readonly #asked = new Map<string, Asked>();

  constructor(options: PassThroughOptions) {
    this.#o = options;
    this.#results = {
      quirks: options.profile.quirks,
      icons: "all",
      log: options.log,
      tools: options.tools,
    };
  }

  /** The upstream client; set by {@linkcode attach} before the upstream initialize. */
  get session(): UpstreamClient {
    if (!this.#session) throw new Error("the pass-through has no upstream client");
    return this.#session;
  }

  /** The icons that the client gets: all, or only data: icons of a remote upstream. */
  get icons(): IconRule {
    return this.#results.icons;
  }

  /**
   * Takes the upstream client of revision 2025-11-25 (before its initialize:
   * the server can ask during it). The loss of the upstream cancels what it
   * asked the client.
   */
  attach(session: UpstreamClient): void {
    this.#session = session;
    this.#results = { ...this.#results, icons: session.link.isRemote ? "data_only" : "all" };
    session.speakLegacy(this);
    session.done.then(() => {
      if (this.#session === session) this.end(CANCEL_REASONS.upstream);
    });
  }

  /**
   * One request of the client: its params go upstream, its result comes back
   * with the result rules, an upstream error unchanged. A request that the
   * upstream server canceled gets `notifications/cancelled` under its id
   * and no response.
   */
  async forward(
    method: string,
    rawParams: Json | undefined,
    signal: AbortSignal,
    id?: RequestId,
  ): Promise<Outcome> {
    const { limits, write } = this.#o;
    const { params, meta, token } = passParams(rawParams);
    const relay = token === undefined || token === null
      ? undefined
      : new ProgressRelay(token, limits.max_progress_per_second, (m) => write(m, id));
    const timeoutMs = passTimeoutMs(limits, method);
    let canceled: { reason: Json | undefined } | undefined;
    try {
      const result = await this.session.request(method, params, {
        timeoutMs,
        signal,
        ...(relay && { onProgress: (p) => relay.relay(p) }),
        ...(meta && { meta }),
        onCancelled: (reason) => canceled = { reason },
      });
      return { kind: "result", result: applyResultRules(method, result, this.#results) };
    } catch (error) {
      if (signal.aborted) return { kind: "canceled" };
      if (canceled) {
        if (id !== undefined) this.#cancelToClient(id, canceled.reason, id);
        return { kind: "canceled" };
      }
      if (error instanceof UpstreamFailure && error.kind === "rpc" && error.error) {
        // The upstream's errors reach the client unchanged (-32042 too: VS Code knows it).
        return { kind: "error", error: BridgeError.passthrough(error.error) };
      }
      return { kind: "error", error: mapUpstreamFailure(error, method, formatLimit(timeoutMs)) };
    } finally {
      // No progress after the response or a cancellation.
      relay?.stop();
    }
  }

  /**
   * `notifications/cancelled` for the client: of its own request (`related`:
   * it belongs there) or of a request of the upstream server that it got.
   */
  #cancelToClient(requestId: RequestId, reason: Json | undefined, related?: RequestId): void {
    const params: JsonObject = { requestId };
    if (typeof reason === "string") params.reason = reason;
    this.#o.write({ jsonrpc: "2.0", method: "notifications/cancelled", params }, related);
  }

  /** A notification of the client for the upstream server, as it is. */
  notify(method: string, params: Json | undefined): void {
    const message: Message = params === undefined
      ? { jsonrpc: "2.0", method }
      : { jsonrpc: "2.0", method, params };
    this.#send(message);
  }

  #send(message: Message): void {
    this.#session?.link.send(message).catch(() => {
      this.#o.log.debug("a message did not reach the upstream server");
    });
  }

  /** A request of the upstream server: to the client under a bridge id. */
  onRequest(upstreamId: RequestId, method: string, params: JsonObject | undefined): void {
    const { pending, write, limits, log } = this.#o;
    if (!UPSTREAM_REQUESTS.has(method)) {
      this.#send({
        jsonrpc: "2.0",
        id: upstreamId,
        error: { code: -32601, message: "Method not found" },
      });
      return;
    }
    const key = idKey(upstreamId);
    if (this.#asked.has(key)) {
      log.debug(`dropped an upstream request whose id is in flight: ${method}`);
      return;
    }
    // The entry goes into the table before the request goes out.
    const { id: bridgeId, answer } = pending.open();
    const timer = setTimeout(() => this.#expire(key), limits.input_answer_timeout_ms);
    this.#asked.set(key, { bridgeId, upstreamId, timer });
    write(
      params === undefined
        ? { jsonrpc: "2.0", id: bridgeId, method }
        : { jsonrpc: "2.0", id: bridgeId, method, params },
    );
    answer.then((a) => this.#answered(key, bridgeId, a));
  }

  #answered(key: string, bridgeId: string, answer: Answer): void {
    const entry = this.#asked.get(key);
    if (!entry || entry.bridgeId !== bridgeId) return;
    this.#asked.delete(key);
    clearTimeout(entry.timer);
    const id = entry.upstreamId;
    if (answer.kind === "result") this.#send({ jsonrpc: "2.0", id, result: answer.result });
    else if (answer.kind === "error") this.#send({ jsonrpc: "2.0", id, error: answer.error });
    else {
      this.#send({ jsonrpc: "2.0", id, error: BridgeError.of("invalid_client_answer").toJSON() });
    }
  }

  /** No answer of the client in time: the client gets the cancel, the server an error. */
  #expire(key: string): void {
    const entry = this.#asked.get(key);
    if (!entry) return;
    this.#asked.delete(key);
    for (const id of this.#o.pending.remove([entry.bridgeId])) {
      this.#cancelToClient(id, CANCEL_REASONS.timeout);
    }
    this.#send({
      jsonrpc: "2.0",
      id: entry.upstreamId,
      error: BridgeError.of("input_timeout").toJSON(),
    });
  }

  /** A notification of the upstream server: to the client, or dropped with a debug line. */
  onNotification(method: string, params: JsonObject | undefined): void {
    if (method === "notifications/cancelled") {
      const requestId = params?.requestId;
      const entry = requestId === undefined || requestId === null || isObject(requestId) ||
          Array.isArray(requestId) || typeof requestId === "boolean"
        ? undefined
        : this.#asked.get(idKey(requestId));
      if (!entry) {
        this.#o.log.debug("dropped an upstream cancellation of an unknown request");
        return;
      }
      this.#asked.delete(idKey(entry.upstreamId));
      clearTimeout(entry.timer);
      for (const id of this.#o.pending.remove([entry.bridgeId])) {
        this.#cancelToClient(id, params?.reason);
      }
      return;
    }
    if (!UPSTREAM_NOTIFICATIONS.has(method) || method === "notifications/progress") {
      // Progress reaches the client only through the request that it belongs to.
      this.#o.log.debug(`dropped the upstream notification ${method}`);
      return;
    }
    this.#o.write(
      params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params },
    );
  }

  /**
   * The end of the input or the loss of the upstream: the requests of the
   * upstream server that went to the client are canceled there.
   */
  end(reason: string): void {
    const entries = [...this.#asked.values()];
    this.#asked.clear();
    for (const entry of entries) clearTimeout(entry.timer);
    const ids = this.#o.pending.remove(entries.map((entry) => entry.bridgeId));
    for (const id of ids) this.#cancelToClient(id, reason);
  }
}
