/**
 * The fetch that the 2025-11-25 Streamable HTTP link gives the SDK's
 * transport: the fetch of the link's HTTP clients (`linkFetch` of
 * `post_transport.ts`: `--ca-file`, HTTP/2 or HTTP/1.1 kept alive, the
 * proxy variables, the send policy), told whether each POST is repeatable
 * (`repeatable.ts`), the headers of the sign-in, and `--max-response-bytes`:
 * a JSON body, or one event of a stream, over the limit fails at once,
 * without the rest of the body in memory.
 *
 * The JSON body of a request's response is read here, whole, before the
 * transport gets it: a body that the network cut, that is not JSON, or not
 * a JSON-RPC message, fails the request with invalid_response and its
 * status (the transport would throw a bare fetch error or its own, which
 * read as a lost connection); so does a success of another media type than
 * JSON and an event stream, as on the 2026-07-28 link. A response that is
 * not OK gets at most the head of its body (`error_status_body.ts`); one of
 * a request with an error status fails it with the status (and the
 * upstream's message) without going to the transport, and so does a 202
 * (the answer to a notification) with invalid_response. The end
 * of a stream is told to the link, with the failure of its request if the
 * response did not come (`onBodyEnd`).
 *
 * @module
 */

import {
  idKey,
  isForeignResponse,
  isObject,
  isRequestId,
  type Json,
  type JsonObject,
  type RequestId,
} from "../jsonrpc/message.ts";
import { classify } from "../jsonrpc/parse.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { readJsonBody, TooLargeError } from "./bounded_body.ts";
import { errorBodyHead, errorStatusFailure, withHead } from "./error_status_body.ts";
import type { SendMeta } from "./post_transport.ts";
import { sendWithChallenges, type TokenSource } from "./token_source.ts";
import { STREAM_ENDED, transportSight } from "./transport_failure.ts";

/** Options of {@linkcode boundedFetch}. */
export interface BoundedFetchOptions {
  /** The largest JSON body and the largest event of a stream. */
  readonly maxResponseBytes: number;
  /** The sign-in; without it a 401 or 403 goes to the transport. */
  readonly tokenSource?: TokenSource;
  /**
   * The body of the response to the request `id` (a stream) ended
   * (`failure` undefined), or failed: over the limit, or cut off.
   * `unanswered` is the failure of the request when the end came without its
   * response (the status, and what the transport saw).
   */
  readonly onBodyEnd?: (
    id: RequestId,
    failure: UpstreamFailure | undefined,
    unanswered: UpstreamFailure,
  ) => void;
  /**
   * A signal that aborts when the request `id` is cancelled (its time limit,
   * or the client): its fetch stops, and the send policy sends nothing more.
   */
  readonly cancelled?: (id: RequestId) => AbortSignal | undefined;
  /** True for a request that may go once more after a failure of the transport. */
  readonly repeatable?: (message: JsonObject) => boolean;
  /** The fetch under it: the link's (`linkFetch`), or a test's. */
  readonly fetch: (url: URL, init: RequestInit, meta: SendMeta) => Promise<Response>;
}

const LF = 0x0a;
const CR = 0x0d;

/** The essence of a media type, lower case. */
export function mediaTypeOf(header: string | null): string {
  return (header ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

/** The JSON-RPC request in the body of a POST (the SDK's transport sends one a POST), or undefined. */
export function requestOf(
  body: unknown,
): (JsonObject & { id: RequestId; method: string }) | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body);
    if (!isObject(message) || typeof message.method !== "string") return undefined;
    return isRequestId(message.id)
      ? message as JsonObject & { id: RequestId; method: string }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stage that fails as soon as one message is over `limit` bytes: the whole
 * body (`json`), or one event of a stream (the bytes between two blank lines).
 */
function limitStage(
  kind: "json" | "sse",
  limit: number,
  failure: () => UpstreamFailure,
): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  let lineLength = 0;
  let lastCR = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (kind === "json") size += chunk.length;
      else {
        for (const byte of chunk) {
          if (byte === LF && lastCR) {
            lastCR = false;
            continue;
          }
          lastCR = byte === CR;
          if (byte === LF || byte === CR) {
            // A blank line ends the event.
            if (lineLength === 0) size = 0;
            lineLength = 0;
          } else {
            lineLength++;
            // Checked at each byte: the blank line after the event is often in the same chunk.
            if (++size > limit) return controller.error(failure());
          }
        }
      }
      if (size > limit) controller.error(failure());
      else controller.enqueue(chunk);
    },
  });
}

/**
 * The fetch of the SDK's transport. A failure that it throws is an
 * {@linkcode UpstreamFailure} (it names no URL); the body of a response is
 * bounded by {@linkcode BoundedFetchOptions.maxResponseBytes}.
 */
export function boundedFetch(options: BoundedFetchOptions): typeof fetch {
  const inner = options.fetch;
  const limit = options.maxResponseBytes;
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const headers = new Headers(init.headers);
    // No compression: the limit counts the bytes of the message.
    headers.set("accept-encoding", "identity");
    const request = requestOf(init.body);
    // The transport's own signal (its close), and the request's cancellation.
    const signals = [init.signal, request && options.cancelled?.(request.id)]
      .filter((s): s is AbortSignal => s instanceof AbortSignal);
    const signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals);
    const meta: SendMeta = request
      ? { repeatable: options.repeatable?.(request) === true, label: request.method }
      : {};
    const response = await sendWithChallenges(options.tokenSource, signal, (token) => {
      if (token !== undefined) headers.set("authorization", token);
      return inner(url, { ...init, headers, signal }, meta);
    });
    const type = mediaTypeOf(response.headers.get("content-type"));
    if (!response.ok) {
      // The SDK's transport reads such a body whole: it gets at most its head.
      const head = await errorBodyHead(response, type);
      if (request && response.status >= 400) {
        throw errorStatusFailure(response.status, type, head);
      }
      return withHead(response, head);
    }
    if (request && response.status === 202) {
      // A 202 accepts a notification: a request would wait for its time limit.
      await response.body?.cancel().catch(() => {});
      throw new UpstreamFailure("invalid_response", { status: 202 });
    }
    if (request && type === "application/json") {
      const { status } = response;
      // Once the transport has the message, the request fails without its response.
      const parsed = () =>
        options.onBodyEnd?.(
          request.id,
          undefined,
          new UpstreamFailure("invalid_response", { status }),
        );
      return await wholeJson(response, limit, idKey(request.id), parsed);
    }
    if (request && type !== "text/event-stream") {
      // A success that is neither JSON nor a stream holds no response: the
      // transport would throw its own error, which reads as a failed transport.
      await response.body?.cancel().catch(() => {});
      throw new UpstreamFailure("invalid_response", { status: response.status });
    }
    return bounded(response, request?.id, limit, options.onBodyEnd);
  };
}

/**
 * The JSON body of the response to a request, read whole within `limit`: a
 * new response of its bytes, or an invalid_response with the status when the
 * body is over the limit or cut (with what the transport saw). Its `json()`
 * (the transport's one read of it) fails so too for a body that is not JSON:
 * the bytes are parsed once, by the transport. `parsed` is called when it
 * parsed them.
 */
async function wholeJson(
  response: Response,
  limit: number,
  own: string,
  parsed: () => void,
): Promise<Response> {
  const { status } = response;
  let bytes: Uint8Array;
  try {
    bytes = await readJsonBody(response, limit);
  } catch (error) {
    if (error instanceof TooLargeError) throw new UpstreamFailure("invalid_response", { status });
    const transport = transportSight(error).words;
    throw new UpstreamFailure("invalid_response", { status, transport });
  }
  const whole = new Response(bytes as Uint8Array<ArrayBuffer>, {
    status,
    statusText: response.statusText,
    headers: response.headers,
  });
  const json = whole.json.bind(whole);
  whole.json = () =>
    json().then((value) => {
      // JSON that is not a message: the transport would throw its own error.
      if (!holdsMessages(value, own)) throw new UpstreamFailure("invalid_response", { status });
      parsed();
      return value;
    }, () => {
      throw new UpstreamFailure("invalid_response", { status });
    });
  return whole;
}

/**
 * True when the JSON body of a response is one JSON-RPC message, or a
 * non-empty batch of them, as the transport reads them: a request, a
 * notification, or a response whose result is an object or whose error is
 * an error object. The response of another request than `own` is not
 * looked at: the own-exchange rule drops it (`legacy/own_exchange.ts`).
 */
function holdsMessages(value: unknown, own: string): boolean {
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0) return false;
  return messages.every((message: Json) => {
    if (isForeignResponse(message, own)) return true;
    const kind = classify(message);
    return kind.kind !== "invalid" &&
      (kind.kind !== "response" || !Object.hasOwn(kind.message, "result") ||
        isObject(kind.message.result));
  });
}

function bounded(
  response: Response,
  id: RequestId | undefined,
  limit: number,
  onBodyEnd: BoundedFetchOptions["onBodyEnd"],
): Response {
  const { status } = response;
  const type = mediaTypeOf(response.headers.get("content-type"));
  const body = response.body;
  if (!body || (type !== "application/json" && type !== "text/event-stream")) return response;
  const failure = () => new UpstreamFailure("invalid_response", { status });
  const length = Number(response.headers.get("content-length") ?? NaN);
  if (type === "application/json" && length > limit) {
    body.cancel().catch(() => {});
    throw failure();
  }
  const kind = type === "application/json" ? "json" : "sse";
  const out = body.pipeThrough(limitStage(kind, limit, failure));
  const watched = id !== undefined && onBodyEnd
    ? watchEnd(out, (error) => {
      // The stage's own failure, or a connection that dropped.
      const failed = error === undefined || error instanceof UpstreamFailure
        ? error
        : new UpstreamFailure("transport_failed", {
          status,
          transport: transportSight(error).words,
        });
      onBodyEnd(
        id,
        failed,
        new UpstreamFailure(kind === "json" ? "invalid_response" : "transport_failed", {
          status,
          ...(kind === "sse" && { transport: STREAM_ENDED }),
        }),
      );
    })
    : out;
  return new Response(watched, {
    status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The same stream, with a callback at its end: undefined, or the error of a read. */
function watchEnd(
  stream: ReadableStream<Uint8Array>,
  onEnd: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read;
      try {
        read = await reader.read();
      } catch (error) {
        onEnd(error);
        controller.error(error);
        return;
      }
      if (!read.done) return controller.enqueue(read.value);
      onEnd(undefined);
      controller.close();
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
