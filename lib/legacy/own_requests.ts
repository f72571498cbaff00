/**
 * The link's own requests to an upstream server of revision 2025-11-25 (the
 * initialize of a new session, and the requests that restore the client's
 * setup): string ids with a prefix, so they never meet the ids of the
 * upstream client (numbers), each with a time limit, settled once.
 *
 * @module
 */

import {
  type ErrorObject,
  idKey,
  isObject,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { isInitializeResult } from "./initialize.ts";

/** Where an own request goes (the SDK's transport of a session). */
export interface OwnTarget {
  send(message: Message): Promise<void>;
}

interface OwnEntry {
  readonly resolve: (result: Json) => void;
  readonly reject: (failure: unknown) => void;
}

/**
 * The table of the link's own requests.
 *
 * @example
 * ```ts
 * import { OwnRequests } from "./own_requests.ts";
 * const own = new OwnRequests("own-");
 * const sent: unknown[] = [];
 * const result = own.request({ send: (m) => (sent.push(m), Promise.resolve()) }, "ping", {}, 1000);
 * own.answer("own-1", { jsonrpc: "2.0", id: "own-1", result: {} });
 * if (JSON.stringify(await result) !== "{}" || sent.length !== 1) throw new Error();
 * ```
 */
export class OwnRequests {
  readonly #prefix: string;
  #next = 0;
  readonly #pending = new Map<string, OwnEntry>();

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** Sends one request; resolves with its result, rejects with its failure. */
  request(target: OwnTarget, method: string, params: JsonObject, timeoutMs: number): Promise<Json> {
    const id = `${this.#prefix}${++this.#next}`;
    const key = idKey(id);
    return new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => this.#settle(key, new UpstreamFailure("timeout")), timeoutMs);
      this.#pending.set(key, {
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (failure) => {
          clearTimeout(timer);
          reject(failure);
        },
      });
      target.send({ jsonrpc: "2.0", id, method, params }).catch((error) =>
        this.#settle(key, error)
      );
    });
  }

  /**
   * The start of a new session on `target`: initialize with `params`, the
   * protocol version of its result for the later requests, and
   * notifications/initialized when the client had sent it.
   */
  async initialize(
    target: OwnTarget & { setProtocolVersion(version: string): void },
    params: JsonObject,
    timeoutMs: number,
    initialized: boolean,
  ): Promise<void> {
    const result = await this.request(target, "initialize", params, timeoutMs);
    if (!isInitializeResult(result)) throw new UpstreamFailure("invalid_response");
    target.setProtocolVersion(String(result.protocolVersion));
    if (initialized) await target.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  /** A response: true when it answers an own request (which it settles). */
  answer(id: RequestId, message: JsonObject): boolean {
    const key = idKey(id);
    if (!this.#pending.has(key)) return typeof id === "string" && id.startsWith(this.#prefix);
    if (Object.hasOwn(message, "result")) {
      const entry = this.#pending.get(key)!;
      this.#pending.delete(key);
      entry.resolve(message.result ?? null);
      return true;
    }
    const error = isObject(message.error) && Number.isInteger(message.error.code)
      ? message.error as unknown as ErrorObject
      : undefined;
    this.#settle(key, new UpstreamFailure("rpc", error ? { error } : {}));
    return true;
  }

  /**
   * The body of a response ended (`failure` undefined) or failed: true when
   * it was an own request's, which fails unless its response came first.
   */
  bodyEnd(id: RequestId, failure: UpstreamFailure | undefined, graceMs: number): boolean {
    const key = idKey(id);
    if (!this.#pending.has(key)) return typeof id === "string" && id.startsWith(this.#prefix);
    if (failure) this.#settle(key, failure);
    else setTimeout(() => this.#settle(key, new UpstreamFailure("transport_failed")), graceMs);
    return true;
  }

  #settle(key: string, failure: unknown): void {
    const entry = this.#pending.get(key);
    if (!entry) return;
    this.#pending.delete(key);
    entry.reject(failure);
  }

  /** The link closed: each own request fails with `closed`. */
  close(): void {
    for (const key of [...this.#pending.keys()]) this.#settle(key, new UpstreamFailure("closed"));
  }
}
