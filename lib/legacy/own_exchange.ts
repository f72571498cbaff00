/**
 * A response counts only on its own exchange (the rule of REMOTE.md, on the
 * 2025-11-25 link too): the body of a POST, a JSON body or an SSE stream,
 * keeps only the response whose id is the id of the POST's request. A
 * response with another id (another request in flight, one answered
 * already, one never sent, or the same digits as a string) is dropped before
 * the v1 SDK's transport reads it, with a debug line that names no id: a
 * lying server cannot answer one request on the exchange of another. A POST
 * of a notification or of an answer carries no response at all.
 *
 * Why a filter of the body: the SDK's transport reports each message of any
 * POST to one handler, without the POST that it came on.
 *
 * @module
 */

import { idKey, isForeignResponse, isObject } from "../jsonrpc/message.ts";
import { mediaTypeOf, requestOf } from "../http/bounded_fetch.ts";

/** The debug line of a dropped response. */
export const FOREIGN_RESPONSE =
  "dropped a response in the body of a POST that is not the response of its request";

/** True for a response: a result or an error, no method. */
function isResponse(message: unknown): message is Record<string, unknown> {
  return isObject(message) && typeof message.method !== "string" &&
    (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"));
}

/** The data of an SSE event of type message (the default), or undefined. */
function eventData(event: string): string | undefined {
  const data: string[] = [];
  let type = "message";
  for (const line of event.split(/\r\n|\r|\n/)) {
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    // An empty type is `message` (the SSE standard, the SDK's parser, `lib/http/sse.ts`).
    else if (field === "event") type = value === "" ? "message" : value;
  }
  return type === "message" && data.length > 0 ? data.join("\n") : undefined;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A blank line: the end of an SSE event. A CRLF that a chunk splits may end
 * an event early: the next one then starts with a blank line, which a
 * reader of the stream ignores.
 */
const eventEnd = () => /(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))/g;

/**
 * The SSE stream less the events that hold a foreign response, ended after
 * the event of the own response: the source body is cancelled there, so a
 * server that leaves the stream open holds no connection (REMOTE.md: the
 * connections stay bounded). The SDK's transport reads the response, then
 * the end of a stream whose request is answered (no resumption).
 */
function sseFilter(own: string | undefined, drop: () => void): TransformStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const blank = eventEnd();
  /** The text of the event so far, in its chunks (a long event is not searched again). */
  let parts: string[] = [];
  /** The last characters of `parts`: a blank line can start there. */
  let tail = "";
  /** Passes `event` on (or drops it); true once it was the own response. */
  const pass = (event: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    const data = eventData(event);
    const message = data === undefined ? undefined : parsed(data);
    if (isForeignResponse(message, own)) {
      drop();
      return false;
    }
    controller.enqueue(encoder.encode(event));
    return own !== undefined && isResponse(message);
  };
  return new TransformStream({
    transform(chunk, controller) {
      let text = decoder.decode(chunk, { stream: true });
      for (;;) {
        const window = tail + text;
        blank.lastIndex = 0;
        const end = blank.exec(window);
        if (!end) {
          parts.push(text);
          tail = window.slice(-3);
          return;
        }
        // The tail had no blank line: the end is in `text`.
        const cut = end.index + end[0].length - tail.length;
        if (pass(parts.join("") + text.slice(0, cut), controller)) {
          // A line feed more: an event that ends in a CR (CR line ends, or a CRLF that the chunks
          // split) is complete to a parser that waits for the LF after a CR; a blank line is
          // nothing to it.
          controller.enqueue(encoder.encode("\n"));
          return controller.terminate();
        }
        parts = [];
        tail = "";
        text = text.slice(cut);
      }
    },
    flush(controller) {
      const rest = parts.join("") + decoder.decode();
      if (rest !== "") pass(rest, controller);
    },
  });
}

/**
 * The JSON body less a foreign response (an empty batch when that was all
 * of it), at its `json()`: the one that the SDK's transport reads (the
 * bounded fetch's own `json()` underneath tells the end of the body).
 */
function filterJson(response: Response, own: string | undefined, drop: () => void): Response {
  const json = response.json.bind(response);
  response.json = () =>
    json().then((data: unknown) => {
      const messages = Array.isArray(data) ? data : [data];
      const kept = messages.filter((message) => !isForeignResponse(message, own));
      if (kept.length === messages.length) return data;
      for (let n = kept.length; n < messages.length; n++) drop();
      return kept;
    });
  return response;
}

/**
 * `fetch` whose POST responses keep only the response of their own request
 * (see the module); other requests and other bodies as they are.
 */
export function ownExchangeFetch(
  fetchFn: typeof fetch,
  debug: (message: string) => void,
): typeof fetch {
  return async (input, init) => {
    const response = await fetchFn(input, init);
    if (init?.method !== "POST" || !response.ok || !response.body) return response;
    const request = requestOf(init.body);
    const own = request && idKey(request.id);
    const type = mediaTypeOf(response.headers.get("content-type"));
    const drop = () => debug(FOREIGN_RESPONSE);
    if (type === "application/json") return filterJson(response, own, drop);
    if (type !== "text/event-stream") return response;
    return new Response(response.body.pipeThrough(sseFilter(own, drop)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
