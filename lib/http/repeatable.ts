/**
 * Which requests are repeatable: a repeat of them has no further effect at
 * the server, so the send policy (`send_once.ts`) may send one once more
 * after a failure of the transport (REMOTE.md, the HTTP link). Never after a
 * time limit: that is the policy's rule.
 *
 * - By the method: a request that changes nothing at the server
 *   ({@linkcode REPEATABLE_METHODS}).
 * - By the server's own promise: a tools/call of a tool that the last
 *   tools/list marked `readOnlyHint: true` or `idempotentHint: true`
 *   ({@linkcode ToolHints}). `--no-hinted-resend` turns this case off for a
 *   server whose hints cannot be trusted.
 *
 * Both links at a URL (revision 2026-07-28 and the 2025-11-25 transport of
 * `--protocol auto`) ask {@linkcode isRepeatable}.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";

/**
 * The methods whose requests change nothing at the server: server/discover,
 * ping, the list requests, resources/read, prompts/get and
 * completion/complete.
 */
export const REPEATABLE_METHODS: ReadonlySet<string> = new Set([
  "server/discover",
  "ping",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/get",
  "completion/complete",
]);

/**
 * The tools that the server marked `readOnlyHint: true` or `idempotentHint:
 * true`, learned from each page of tools/list that passes the link. A tool
 * that a later list shows without the hint is no longer repeatable.
 */
export class ToolHints {
  readonly #repeatable = new Set<string>();

  /** Keeps the hints of each tool of one tools/list result (one page). */
  learn(result: Json | undefined): void {
    const tools = isObject(result) ? result.tools : undefined;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== "string") continue;
      const hints = isObject(tool.annotations) ? tool.annotations : {};
      if (hints.readOnlyHint === true || hints.idempotentHint === true) {
        this.#repeatable.add(tool.name);
      } else this.#repeatable.delete(tool.name);
    }
  }

  /** True for a tool that the last list marked read-only or idempotent. */
  has(tool: string): boolean {
    return this.#repeatable.has(tool);
  }
}

/**
 * True when a request may go once more after a failure of the transport:
 * its method changes nothing, or it calls a tool of `hints` (undefined:
 * `--no-hinted-resend`, no tools/call is repeatable).
 *
 * @example
 * ```ts
 * import { isRepeatable, ToolHints } from "./repeatable.ts";
 * const hints = new ToolHints();
 * hints.learn({ tools: [{ name: "search", annotations: { readOnlyHint: true } }, { name: "rm" }] });
 * const call = (name: string) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name } });
 * if (!isRepeatable(call("search"), hints) || isRepeatable(call("rm"), hints)) throw new Error();
 * if (isRepeatable(call("search"), undefined)) throw new Error();
 * ```
 */
export function isRepeatable(message: JsonObject, hints: ToolHints | undefined): boolean {
  const method = message.method;
  if (typeof method !== "string" || !Object.hasOwn(message, "id")) return false;
  if (REPEATABLE_METHODS.has(method)) return true;
  if (method !== "tools/call" || !hints) return false;
  const name = isObject(message.params) ? message.params.name : undefined;
  return typeof name === "string" && hints.has(name);
}
