/**
 * The requests of the client that the 2025-11-25 HTTP link sent and that
 * have no response yet: each one's id, the abort of its POST (a
 * cancellation, or its time limit, stops the fetch: the send policy then
 * sends nothing more), and the tools/list among them, whose results give the
 * hints of the tools (`http/repeatable.ts`).
 *
 * @module
 */

import { idKey, type JsonObject, type RequestId } from "../jsonrpc/message.ts";
import { ToolHints } from "../http/repeatable.ts";

/** One open request. */
interface Open {
  readonly id: RequestId;
  readonly stop: AbortController;
  readonly toolList: boolean;
}

/** The open requests of the client, by the key of their id. */
export class OpenRequests {
  readonly #open = new Map<string, Open>();
  /** The read-only and idempotent tools of the last tools/list of the client. */
  readonly hints = new ToolHints();

  /** A request of `method` went out. */
  add(id: RequestId, method: string): void {
    const toolList = method === "tools/list";
    this.#open.set(idKey(id), { id, stop: new AbortController(), toolList });
  }

  has(id: RequestId): boolean {
    return this.#open.has(idKey(id));
  }

  /** The signal that stops the POST of the request `id`, while it is open. */
  signal(id: RequestId): AbortSignal | undefined {
    return this.#open.get(idKey(id))?.stop.signal;
  }

  /** The client cancelled `id` (or its time limit passed): its POST stops. */
  cancel(id: RequestId): void {
    this.#open.get(idKey(id))?.stop.abort();
  }

  /**
   * The response `message` of `id` came: false when the request is not open
   * (it failed already). A tools/list result gives the hints.
   */
  answered(id: RequestId, message: JsonObject): boolean {
    const open = this.#open.get(idKey(id));
    if (!open) return false;
    this.#open.delete(idKey(id));
    if (open.toolList) this.hints.learn(message.result);
    return true;
  }

  /** The request `id` failed: false when it was not open. */
  close(id: RequestId): boolean {
    return this.#open.delete(idKey(id));
  }

  /** The ids of the open requests. */
  ids(): RequestId[] {
    return [...this.#open.values()].map((open) => open.id);
  }
}
