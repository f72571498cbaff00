/**
 * What the client set up in a session of an upstream server of revision
 * 2025-11-25 at a URL, as the link saw it go by: the params of its
 * initialize, the level of its last `logging/setLevel` that succeeded, and
 * the resources of its `resources/subscribe` that succeeded and were not
 * unsubscribed. A new session after a lost one gets them again, in the
 * messages of {@linkcode SessionSetup.restore}.
 *
 * @module
 */

import { idKey, isObject, isRequestId, type Json, type JsonObject } from "../jsonrpc/message.ts";

/** A request of the client that changes the setup, until its response. */
interface Change {
  readonly method: string;
  readonly value: Json;
}

/** The methods whose success changes the setup, and the param that it keeps. */
const SETUP_PARAMS: Readonly<Record<string, string>> = {
  "logging/setLevel": "level",
  "resources/subscribe": "uri",
  "resources/unsubscribe": "uri",
};

/**
 * The setup of the client, from the messages that went to the upstream
 * server and the responses that came back.
 *
 * @example
 * ```ts
 * import { SessionSetup } from "./session_setup.ts";
 * const setup = new SessionSetup();
 * setup.sent({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } });
 * setup.sent({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "file:///a" } });
 * setup.answered({ jsonrpc: "2.0", id: 2, result: {} });
 * const restore = setup.restore();
 * if (restore.length !== 1 || restore[0]!.params.uri !== "file:///a") throw new Error();
 * ```
 */
export class SessionSetup {
  #initialize: JsonObject | undefined;
  #level: Json | undefined;
  readonly #subscriptions = new Set<string>();
  /** The requests that change the setup, by the key of their id. */
  readonly #changes = new Map<string, Change>();

  /** The params of the first initialize, once it went out. */
  get initializeParams(): JsonObject | undefined {
    return this.#initialize;
  }

  /** The level of the last `logging/setLevel` that succeeded. */
  get level(): Json | undefined {
    return this.#level;
  }

  /** The resources that the client subscribed to, in the order of their subscribe. */
  get subscriptions(): readonly string[] {
    return [...this.#subscriptions];
  }

  /** A message of the client that goes to the upstream server. */
  sent(message: JsonObject): void {
    const { method, id } = message;
    if (typeof method !== "string" || !isRequestId(id)) return;
    const params = isObject(message.params) ? message.params : {};
    if (method === "initialize") {
      this.#initialize ??= params;
      return;
    }
    const name = SETUP_PARAMS[method];
    const value = name === undefined ? undefined : params[name];
    if (value === undefined) return;
    this.#changes.set(idKey(id), { method, value });
  }

  /** A response of the upstream server: a result makes its change. */
  answered(message: JsonObject): void {
    if (!isRequestId(message.id)) return;
    const key = idKey(message.id);
    const change = this.#changes.get(key);
    if (!change) return;
    this.#changes.delete(key);
    if (!Object.hasOwn(message, "result")) return;
    if (change.method === "logging/setLevel") this.#level = change.value;
    else if (typeof change.value !== "string") return;
    else if (change.method === "resources/subscribe") this.#subscriptions.add(change.value);
    else this.#subscriptions.delete(change.value);
  }

  /** A request that failed without a response: it changes nothing. */
  failed(id: Json): void {
    if (isRequestId(id)) this.#changes.delete(idKey(id));
  }

  /**
   * The requests that set up a new session as the client had the old one:
   * `logging/setLevel`, then one `resources/subscribe` for each resource.
   */
  restore(): { readonly method: string; readonly params: JsonObject }[] {
    const requests: { method: string; params: JsonObject }[] = [];
    if (this.#level !== undefined) {
      requests.push({ method: "logging/setLevel", params: { level: this.#level } });
    }
    for (const uri of this.#subscriptions) {
      requests.push({ method: "resources/subscribe", params: { uri } });
    }
    return requests;
  }
}
