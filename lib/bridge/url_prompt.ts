/**
 * The URL prompt of a later sign-in: the front end asks the client to open
 * the start URL of the sign-in with a URL elicitation (`elicitation/create`,
 * mode `url`), once the client declared `elicitation.url` and sent
 * notifications/initialized. The sign-in (`lib/auth/`) only sees the
 * `UrlPrompt` function of `upstream/link.ts`.
 *
 * @module
 */

import type { Json, JsonObject, Message } from "../jsonrpc/message.ts";
import type { UrlPrompt, UrlPromptAnswer } from "../upstream/link.ts";
import { CANCEL_REASONS, type PendingTable } from "./pending.ts";

/** What the prompt needs of the front end. */
export interface UrlPromptEnv {
  readonly pending: PendingTable;
  readonly write: (message: Message) => void;
  readonly nextElicitationId: () => string;
}

function answerOf(result: Json): UrlPromptAnswer {
  const action = typeof result === "object" && result !== null && !Array.isArray(result)
    ? (result as JsonObject).action
    : undefined;
  return action === "accept" ? "accept" : action === "cancel" ? "cancel" : "decline";
}

/**
 * The prompt of one connection. An error answer rejects; an abort cancels
 * the question with notifications/cancelled.
 */
export function urlPrompt(env: UrlPromptEnv): UrlPrompt {
  return async (url, message, signal) => {
    signal.throwIfAborted();
    const entry = env.pending.open();
    const elicitationId = env.nextElicitationId();
    env.write({
      jsonrpc: "2.0",
      id: entry.id,
      method: "elicitation/create",
      params: { mode: "url", message, url, elicitationId },
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        for (const id of env.pending.remove([entry.id])) {
          env.write({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: CANCEL_REASONS.timeout },
          });
        }
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const answer = await Promise.race([entry.answer, aborted]);
      if (answer.kind !== "result") throw new Error("the client did not answer the URL prompt");
      return answerOf(answer.result);
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  };
}
