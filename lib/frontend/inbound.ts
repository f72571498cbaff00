/**
 * What one frame of the client is, by the rules of the message table and of
 * "Lines that are not valid". A pure function: the front end acts on it.
 *
 * @module
 */

import type { Frame } from "../jsonrpc/framer.ts";
import {
  type IdScan,
  idTokenOf,
  isBridgeId,
  scanIdFromHead,
  scanIdFromTail,
} from "../jsonrpc/id_scan.ts";
import {
  type ErrorObject,
  idOfToken,
  idString,
  isObject,
  isRequestId,
  type JsonObject,
  type RequestId,
} from "../jsonrpc/message.ts";
import { type Classified, classify, decodeLine, parseLine } from "../jsonrpc/parse.ts";
import { BridgeError } from "../errors/errors.ts";
import type { Answer } from "../input/pending.ts";

/** One frame of the client, classified. */
export type Inbound =
  /** A request or a notification, as {@linkcode classify} gives it. */
  | Extract<Classified, { readonly kind: "request" | "notification" }>
  /** An answer to a request of the bridge (an id with the prefix), valid or not. */
  | { readonly kind: "answer"; readonly id: string; readonly answer: Answer }
  /** A line that gets an error response. */
  | { readonly kind: "reject"; readonly id: RequestId | null; readonly error: BridgeError }
  /** A message that gets no answer. */
  | { readonly kind: "drop"; readonly why: string };

/** The limits that the reading of a frame needs. */
export interface InboundLimits {
  readonly max_line_bytes: number;
  readonly max_depth: number;
}

function rejectLine(
  cause: "line_too_long" | "too_deep" | "parse_error",
  scan: IdScan,
  prefix: string,
  detail?: string,
): Inbound {
  const id = scan.found ? scan.id : null;
  if (id !== null && isBridgeId(id, prefix)) {
    return { kind: "answer", id: idString(id)!, answer: { kind: "invalid" } };
  }
  return { kind: "reject", id, error: BridgeError.of(cause, detail) };
}

/**
 * The id of a parsed message as its line wrote it: the parsed value when it
 * writes back as the same token (nearly always), else the token of the line
 * (a {@linkcode RawId}), so the client gets back exactly what it sent.
 * Undefined for a token that is not an integer although its double is
 * (`9007199254740993.5`). The id scans of the lines that do not parse use
 * the same rule.
 */
function exactId(bytes: Uint8Array, parsed: RequestId): RequestId | undefined {
  const plain = typeof parsed === "string" ? JSON.stringify(parsed) : String(parsed);
  const token = idTokenOf(bytes, plain);
  if (token === undefined || token === plain) return parsed;
  let same = false;
  try {
    same = JSON.parse(token) === parsed;
  } catch {
    // not the member that was parsed
  }
  return same ? idOfToken(token) : parsed;
}

type Reviver = (
  this: unknown,
  key: string,
  value: unknown,
  context: { source?: string },
) => unknown;

/**
 * Gives a notifications/cancelled the exact token of its requestId, when its
 * value is an integer that a double cannot hold: the cancel then matches the
 * request with the same token. A parse with a reviver costs 5-10× a plain
 * parse, so only such a cancel gets one.
 */
function exactRequestId(bytes: Uint8Array, params: JsonObject): void {
  const id = params.requestId;
  if (typeof id !== "number" || Number.isSafeInteger(id)) return;
  const sources = new Map<unknown, string>();
  const reviver: Reviver = function (key, value, context) {
    if (key === "requestId" && context.source !== undefined) sources.set(this, context.source);
    return value;
  };
  const again = JSON.parse(decodeLine(bytes) ?? "null", reviver as never) as JsonObject | null;
  const source = sources.get(again?.params);
  const exact = source === undefined ? undefined : idOfToken(source);
  if (exact === undefined) delete params.requestId; // not an id: it cancels nothing
  else params.requestId = exact;
}

/**
 * Reads one frame of the client. `prefix` marks the ids of the bridge's own
 * requests: a line with such an id answers that request, even when it is
 * not valid, and the client gets nothing for it.
 */
export function readClientFrame(frame: Frame, limits: InboundLimits, prefix: string): Inbound {
  if (frame.kind === "too_long") {
    const head = scanIdFromHead(frame.head);
    const scan = head.found ? head : scanIdFromTail(frame.tail);
    return rejectLine("line_too_long", scan, prefix, `limit: ${limits.max_line_bytes} bytes`);
  }
  const parsed = parseLine(frame.bytes, limits.max_depth);
  if (!parsed.ok) {
    const detail = parsed.cause === "too_deep" ? `limit: ${limits.max_depth} levels` : undefined;
    return rejectLine(parsed.cause, scanIdFromHead(frame.bytes), prefix, detail);
  }
  const message = classify(parsed.value);
  switch (message.kind) {
    case "request": {
      const id = exactId(frame.bytes, message.id);
      if (id === undefined) {
        return { kind: "reject", id: null, error: BridgeError.of("invalid_request_shape") };
      }
      return id === message.id ? message : { ...message, id };
    }
    case "notification":
      if (message.method === "notifications/cancelled" && isObject(message.params)) {
        exactRequestId(frame.bytes, message.params);
      }
      return message;
    case "response": {
      const { id } = message;
      if (!isBridgeId(id, prefix)) {
        return { kind: "drop", why: `a response for the unknown id ${String(id)}` };
      }
      const answer: Answer = Object.hasOwn(message.message, "result")
        ? { kind: "result", result: message.message.result ?? null }
        : { kind: "error", error: message.message.error as unknown as ErrorObject };
      return { kind: "answer", id: id as string, answer };
    }
    case "invalid": {
      const value = parsed.value;
      const rawId = isObject(value) ? value.id : undefined;
      if (isRequestId(rawId) && isBridgeId(rawId, prefix)) {
        return { kind: "answer", id: idString(rawId)!, answer: { kind: "invalid" } };
      }
      if (message.replyId === undefined) {
        return { kind: "drop", why: "a response that is not valid" };
      }
      const replyId = message.replyId === null ? null : exactId(frame.bytes, message.replyId);
      return {
        kind: "reject",
        id: replyId ?? null,
        error: BridgeError.of("invalid_request_shape"),
      };
    }
  }
}
