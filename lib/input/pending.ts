/**
 * The table of the bridge's own requests to the client (the questions of the
 * input rounds), keyed by their ids `<prefix><n>`.
 *
 * An entry goes in before its request goes out; the reader settles it at
 * once with the answer. An answer whose id is unknown or already settled is
 * dropped. A cancellation removes the entries first, and then reports which
 * requests went out without an answer, so that the client gets
 * `notifications/cancelled` for each of them and a late answer is dropped.
 *
 * @module
 */

import type { ErrorObject, Json, RequestId } from "../jsonrpc/message.ts";

/**
 * The reason of a cancellation tells which event occurred. The same reasons
 * go to the upstream server when the bridge cancels one of its requests.
 *
 * @example
 * ```ts
 * import { CANCEL_REASONS } from "./pending.ts";
 * const cancelled = {
 *   jsonrpc: "2.0",
 *   method: "notifications/cancelled",
 *   params: { requestId: "b-1", reason: CANCEL_REASONS.timeout },
 * };
 * if (cancelled.params.reason !== "no answer in time") throw new Error();
 * ```
 */
export const CANCEL_REASONS = {
  /** The client canceled the original request. */
  client: "the client canceled the request",
  /** The input ended. */
  closed: "the client closed the connection",
  /** The upstream server stopped. */
  upstream: "the upstream server stopped",
  /** The client did not answer in time. */
  timeout: "no answer in time",
} as const;

/**
 * What the client answered.
 *
 * @example
 * ```ts
 * import type { Answer } from "./pending.ts";
 * const answers: Answer[] = [
 *   { kind: "result", result: { roots: [] } },
 *   { kind: "error", error: { code: -32601, message: "Method not found" } },
 *   { kind: "invalid" },
 * ];
 * if (answers.filter((a) => a.kind !== "result").length !== 2) throw new Error();
 * ```
 */
export type Answer =
  | { readonly kind: "result"; readonly result: Json }
  | { readonly kind: "error"; readonly error: ErrorObject }
  /** A line that is not valid, with the id of the request. */
  | { readonly kind: "invalid" };

interface Entry {
  readonly settle: (answer: Answer) => void;
}

/**
 * The pending requests of the bridge on one connection.
 *
 * @example
 * ```ts
 * import { PendingTable } from "./pending.ts";
 * const table = new PendingTable("b-");
 * const { id, answer } = table.open();
 * if (id !== "b-1" || table.size !== 1) throw new Error();
 * if (!table.settle("b-1", { kind: "result", result: { action: "accept" } })) throw new Error();
 * if (table.settle("b-1", { kind: "invalid" })) throw new Error("a second answer is dropped");
 * if ((await answer).kind !== "result") throw new Error();
 * // A cancellation reports the questions that went out without an answer.
 * const second = table.open();
 * if (table.removeAll().join() !== second.id) throw new Error();
 * ```
 */
export class PendingTable {
  readonly #prefix: string;
  readonly #entries = new Map<string, Entry>();
  #next = 1;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  /** The number of requests without an answer. */
  get size(): number {
    return this.#entries.size;
  }

  /** Adds an entry with a new id. The request may go out after this call. */
  open(): { readonly id: string; readonly answer: Promise<Answer> } {
    const id = `${this.#prefix}${this.#next++}`;
    let settle!: (answer: Answer) => void;
    const answer = new Promise<Answer>((resolve) => settle = resolve);
    this.#entries.set(id, { settle });
    return { id, answer };
  }

  /** Settles an entry; false for an id that is unknown, not a string, or settled. */
  settle(id: RequestId | null, answer: Answer): boolean {
    if (typeof id !== "string") return false;
    const entry = this.#entries.get(id);
    if (!entry) return false;
    this.#entries.delete(id);
    entry.settle(answer);
    return true;
  }

  /**
   * Removes the entries of `ids` and returns those that had no answer yet:
   * they get `notifications/cancelled`. Their promises never settle.
   */
  remove(ids: readonly string[]): string[] {
    return ids.filter((id) => this.#entries.delete(id));
  }

  /** Removes every entry; returns the ids that had no answer. */
  removeAll(): string[] {
    const ids = [...this.#entries.keys()];
    this.#entries.clear();
    return ids;
  }
}
