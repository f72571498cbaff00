/**
 * The checks of a whole round of input, before any input request is
 * examined: the number of rounds, the members of the InputRequiredResult and
 * the number of input requests. Pure functions; each returns a result.
 *
 * @module
 */

import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import { BridgeError } from "../errors/errors.ts";
import type { Limits } from "../settings/limits.ts";

/** A value, or the error that fails the original request. */
export type RoundResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: BridgeError };

/** What a round asks for, once its checks passed. */
export interface CheckedRound {
  /** The input requests by key. */
  readonly requests: JsonObject;
  /** The requestState to send back, when the upstream server gave one. */
  readonly requestState: string | undefined;
  /** The URLs that the input requests of this round ask for. */
  readonly urls: ReadonlySet<string>;
}

const fail = (error: BridgeError): RoundResult<never> => ({ ok: false, error });

/**
 * The checks of the whole round `round` (1 for the first result) of an
 * InputRequiredResult, in the order of the spec: the round limit first.
 */
export function checkRound(
  result: JsonObject,
  round: number,
  limits: Pick<Limits, "mrtr_max_rounds_client" | "max_input_requests">,
): RoundResult<CheckedRound> {
  if (round >= limits.mrtr_max_rounds_client) return fail(BridgeError.of("too_many_rounds"));
  const requests = result.inputRequests ?? {};
  if (!isObject(requests)) {
    return fail(
      BridgeError.of("invalid_input_request", "the inputRequests member is not an object"),
    );
  }
  const requestState = result.requestState;
  if (requestState !== undefined && typeof requestState !== "string") {
    return fail(
      BridgeError.of("invalid_input_request", "the requestState member is not a string"),
    );
  }
  const count = Object.keys(requests).length;
  if (count > limits.max_input_requests) {
    return fail(
      BridgeError.of(
        "too_many_input_requests",
        `${count} input requests in one round, limit: ${limits.max_input_requests}`,
      ),
    );
  }
  return { ok: true, value: { requests, requestState, urls: askedUrls(requests) } };
}

/** The URLs of the input requests; a URL step that is not among them is complete. */
function askedUrls(requests: JsonObject): Set<string> {
  const urls = new Set<string>();
  for (const request of Object.values(requests)) {
    if (isObject(request) && isObject(request.params) && typeof request.params.url === "string") {
      urls.add(request.params.url);
    }
  }
  return urls;
}
