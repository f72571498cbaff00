/**
 * A later sign-in (M4) asks the client to open the start URL of the sign-in
 * with a URL elicitation, when the client declared `elicitation.url` and
 * sent notifications/initialized. The front end gives this prompt to the
 * link; the sign-in part never sees the front end.
 *
 * @module
 */

import { isObject, type Message } from "../jsonrpc/message.ts";
import type { UrlPrompt, UrlPromptAnswer } from "../upstream/link.ts";
import { CANCEL_REASONS, type PendingTable } from "./pending.ts";

/** What the prompt needs of the front end. */
export interface SignInPromptEnv {
  readonly pending: PendingTable;
  readonly write: (message: Message) => void;
  /** A new `elicitation-<n>` id, unique on the connection. */
  readonly nextElicitationId: () => string;
  /** The wait for the answer (the 1 h of the input rounds). */
  readonly answerTimeoutMs: number;
}

/**
 * The prompt: one `elicitation/create` in the URL mode. Accept, decline and
 * cancel are the client's answer (a result without a valid action is a
 * cancel). An error of the client or a line that is not valid rejects: the
 * client did not give its consent. The time limit of the answer or an abort
 * of `signal` (the sign-in's own time limit) cancel the question for the
 * client and give cancel. After an accept, the client gets
 * `notifications/elicitation/complete` when `done` settles.
 *
 * @example
 * ```ts
 * import { signInPrompt } from "./sign_in_prompt.ts";
 * import { PendingTable } from "./pending.ts";
 * import type { Message } from "../jsonrpc/message.ts";
 * const pending = new PendingTable("b-");
 * const sent: Message[] = [];
 * const signedIn = Promise.withResolvers<void>();
 * const prompt = signInPrompt({
 *   pending,
 *   // A client that accepts each question at once.
 *   write: (message) => {
 *     sent.push(message);
 *     if ("id" in message && "method" in message) {
 *       pending.settle(message.id, { kind: "result", result: { action: "accept" } });
 *     }
 *   },
 *   nextElicitationId: () => "elicitation-1",
 *   answerTimeoutMs: 1_000,
 * }, () => signedIn.promise);
 * const signal = new AbortController().signal;
 * const answer = await prompt("https://example.com/sign-in", "Sign in", signal);
 * if (answer !== "accept") throw new Error();
 * // Once the sign-in is done, the client hears that the elicitation is complete.
 * signedIn.resolve();
 * await new Promise((resolve) => setTimeout(resolve, 0));
 * const methods = sent.map((m) => "method" in m ? m.method : "");
 * if (methods.join() !== "elicitation/create,notifications/elicitation/complete") {
 *   throw new Error();
 * }
 * ```
 */
export function signInPrompt(env: SignInPromptEnv, done: () => Promise<void>): UrlPrompt {
  return async (url, message, signal): Promise<UrlPromptAnswer> => {
    const elicitationId = env.nextElicitationId();
    const { id, answer } = env.pending.open();
    env.write({
      jsonrpc: "2.0",
      id,
      method: "elicitation/create",
      params: { mode: "url", message, url, elicitationId },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(CANCEL_REASONS.timeout), env.answerTimeoutMs);
      signal.addEventListener("abort", () => resolve(CANCEL_REASONS.timeout), { once: true });
    });
    const first = await Promise.race([answer, stop]);
    clearTimeout(timer);
    if (typeof first === "string") {
      for (const open of env.pending.remove([id])) {
        env.write({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: open, reason: first },
        });
      }
      return "cancel";
    }
    if (first.kind !== "result") throw new Error("the client did not answer the URL prompt");
    const action = isObject(first.result) ? first.result.action : undefined;
    if (action !== "accept" && action !== "decline") return "cancel";
    if (action === "accept") {
      const complete = () =>
        env.write({
          jsonrpc: "2.0",
          method: "notifications/elicitation/complete",
          params: { elicitationId },
        });
      done().then(complete, complete);
    }
    return action;
  };
}
