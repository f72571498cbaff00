/**
 * The upstream link: the connection to the upstream server. The stdio link
 * (a child process), the HTTP link (a URL) and the memory link (a server in
 * the same process) implement it; the upstream client of
 * {@linkcode ./client.ts} runs on top.
 *
 * @module
 */

import type { JsonObject, Message, RequestId } from "../jsonrpc/message.ts";
import { UpstreamFailure } from "./failure.ts";

/**
 * A frame from the upstream server.
 *
 * @example
 * ```ts
 * import type { UpstreamFrame } from "./link.ts";
 * import { scanIdFromHead } from "../jsonrpc/id_scan.ts";
 * // A line of the server that is not JSON: its request gets invalid_response.
 * const line = new TextEncoder().encode('{"jsonrpc":"2.0","id":"b-7","result":');
 * const scan = scanIdFromHead(line);
 * const frame: UpstreamFrame = { kind: "invalid", id: scan.found ? scan.id : null };
 * if (frame.kind !== "invalid" || frame.id !== "b-7") throw new Error();
 * ```
 */
export type UpstreamFrame =
  /**
   * A JSON object (classified by the upstream client). `via` is the id of the
   * bridge's request on whose own exchange it came (an SSE stream of a POST),
   * where the link knows it: a notification there belongs to that request.
   */
  | { readonly kind: "message"; readonly value: JsonObject; readonly via?: RequestId }
  /**
   * A line that is not a message, or that is longer than the line limit, with
   * the id that the scan found in it (`null`: none).
   */
  | { readonly kind: "invalid"; readonly id: RequestId | null }
  /**
   * The request `id` of the bridge failed on the link itself: an HTTP status,
   * a response over the size limit, a body that is not valid, a sign-in that
   * failed. The request gets this failure; the link goes on.
   */
  | { readonly kind: "failed"; readonly id: RequestId; readonly failure: UpstreamFailure };

/**
 * How a link ended. {@linkcode failureOfEnd} maps it, in one place.
 */
export type LinkEnd =
  /** The child process stopped. `code` is its exit code, or null after a signal. */
  | { readonly kind: "exited"; readonly code: number | null }
  /** The connection closed, or the bridge closed it. */
  | { readonly kind: "closed" }
  /** The transport failed; `failure` says how, when the link knows. */
  | { readonly kind: "failed"; readonly failure?: UpstreamFailure };

/**
 * What the client answered to a URL that the sign-in asked it to open.
 */
export type UrlPromptAnswer = "accept" | "decline" | "cancel";

/**
 * Asks the client to open a URL with a URL elicitation (a later sign-in).
 * The front end gives it to the link once the client can answer one.
 *
 * @example
 * ```ts
 * import type { UrlPrompt, UrlPromptAnswer } from "./link.ts";
 * const opened: string[] = [];
 * // What the front end gives the link: it asks the client with a URL elicitation.
 * const prompt: UrlPrompt = (url, _message, signal) => {
 *   opened.push(url);
 *   const answer: UrlPromptAnswer = signal.aborted ? "cancel" : "accept";
 *   return Promise.resolve(answer);
 * };
 * const signal = new AbortController().signal;
 * const answer = await prompt("https://example.com/sign-in", "Sign in", signal);
 * if (answer !== "accept" || opened.length !== 1) throw new Error();
 * ```
 */
export type UrlPrompt = (
  url: string,
  message: string,
  signal: AbortSignal,
) => Promise<UrlPromptAnswer>;

/**
 * What `read` gives each frame to. A returned promise holds the reading of
 * the next frame until it settles: the back pressure of a peer that reads
 * slowly reaches the upstream server instead of a buffer.
 *
 * @example
 * ```ts
 * import type { FrameSink, UpstreamFrame } from "./link.ts";
 * const seen: UpstreamFrame[] = [];
 * const taken = Promise.withResolvers<void>();
 * // The returned promise holds the next frame until the client took this one.
 * const sink: FrameSink = (frame) => {
 *   seen.push(frame);
 *   return taken.promise;
 * };
 * const held = sink({ kind: "message", value: { jsonrpc: "2.0", method: "x" } });
 * taken.resolve();
 * await held;
 * if (seen.length !== 1) throw new Error();
 * ```
 */
export type FrameSink = (frame: UpstreamFrame) => void | Promise<void>;

/**
 * The connection to an upstream server.
 *
 * @example
 * ```ts
 * import type { LinkEnd, UpstreamFrame, UpstreamLink } from "./link.ts";
 * import type { Message } from "../jsonrpc/message.ts";
 * // A link to a server that answers each request with an empty result.
 * function echoLink(): UpstreamLink {
 *   const end = Promise.withResolvers<LinkEnd>();
 *   let deliver: ((frame: UpstreamFrame) => void) | undefined;
 *   return {
 *     isRemote: false,
 *     read: (onFrame) => {
 *       deliver = (frame) => void onFrame(frame);
 *       return end.promise.then(() => {});
 *     },
 *     send: (message: Message) => {
 *       if ("method" in message && "id" in message) {
 *         deliver?.({ kind: "message", value: { jsonrpc: "2.0", id: message.id, result: {} } });
 *       }
 *       return Promise.resolve();
 *     },
 *     ended: end.promise,
 *     close: () => {
 *       end.resolve({ kind: "closed" });
 *       return Promise.resolve();
 *     },
 *   };
 * }
 * const link = echoLink();
 * const frames: UpstreamFrame[] = [];
 * const reading = link.read((frame) => void frames.push(frame));
 * await link.send({ jsonrpc: "2.0", id: 1, method: "ping" });
 * await link.close();
 * await reading;
 * if (frames.length !== 1 || frames[0]!.kind !== "message") throw new Error();
 * ```
 */
export interface UpstreamLink {
  /**
   * True for an upstream server that is not on this host (a URL, a transport
   * over a network): its icons do not get the trust of a local process.
   */
  readonly isRemote: boolean;
  /**
   * True for a link whose requests have no time limit: the memory link, whose
   * server runs in the same process (spec M5). The limits of the client's
   * answers and of the listen stream still apply.
   */
  readonly untimed?: boolean;
  /**
   * Reads the upstream server until the link ends and gives each frame to
   * `onFrame` at once, in the order the server wrote them: an event reaches
   * the bridge before the next frame is read. Call it once.
   */
  read(onFrame: FrameSink): Promise<void>;
  /**
   * Sends one message; resolves when the link took it. Rejects when the link
   * is closed. A `notifications/cancelled` also stops the transport's work
   * for its request (for HTTP: the fetch is aborted).
   */
  send(message: Message): Promise<void>;
  /** Resolves once, when the link ends for any reason. */
  readonly ended: Promise<LinkEnd>;
  /**
   * Resolves when the link can no longer send while the upstream server runs
   * on (a child that closed its stdin): each later send rejects at once with
   * this failure, and what was sent before may still be answered. It stays
   * pending on a link that ends as a whole (see `ended`), and on a link that
   * cannot be half closed.
   */
  readonly sendEnded?: Promise<UpstreamFailure>;
  /**
   * Closes the link and resolves when it is closed, within the link's own
   * deadlines; for a child: stdin closed, SIGTERM, SIGKILL.
   */
  close(): Promise<void>;
  /** For a link with a sign-in: how a later sign-in asks the client to open a URL. */
  setUrlPrompt?(prompt: UrlPrompt | undefined): void;
  /**
   * For a link with a sign-in: resolves at the next sign-in that succeeds (a
   * listen stream refused with 401 or 403 opens again only then).
   */
  nextSignIn?(): Promise<void>;
}

/**
 * Makes the link of a connection. It rejects with an `UpstreamFailure` of the
 * kind `spawn_failed` (a command) or `connect_failed` (a URL).
 *
 * @example
 * ```ts
 * import type { Connect } from "./link.ts";
 * import { connectMemoryLink } from "./memory.ts";
 * import { McpServer } from "@modelcontextprotocol/server";
 * // Each call makes a new link (a restart makes another).
 * const connect: Connect = () =>
 *   connectMemoryLink(() => new McpServer({ name: "s", version: "1" }));
 * const [a, b] = [await connect(), await connect()];
 * if (a === b) throw new Error();
 * await Promise.all([a.close(), b.close()]);
 * ```
 */
export type Connect = () => Promise<UpstreamLink>;

/**
 * How a link ended, in words for a log line: the exit code of a child that
 * exited, or that a signal stopped it (its code is then null, which a log
 * line never shows).
 *
 * @example
 * ```ts
 * import { endWords } from "./link.ts";
 * if (!endWords({ kind: "exited", code: null }).endsWith("stopped by a signal")) throw new Error();
 * ```
 */
export function endWords(end: LinkEnd): string {
  if (end.kind !== "exited") return "the upstream connection closed";
  return end.code === null
    ? "the upstream server process stopped by a signal"
    : `the upstream server process stopped with the code ${end.code}`;
}

/**
 * The one mapping from how a link ended to the failure of what was in flight
 * and of what comes later: a child that stopped is `exited`, a transport
 * that failed keeps its own failure (or is `transport_failed`), and each
 * other end is `closed`.
 *
 * @example
 * ```ts
 * import { failureOfEnd } from "./link.ts";
 * if (failureOfEnd({ kind: "exited", code: 1 }).kind !== "exited") throw new Error();
 * ```
 */
export function failureOfEnd(end: LinkEnd): UpstreamFailure {
  switch (end.kind) {
    case "exited":
      return new UpstreamFailure("exited");
    case "failed":
      return end.failure ?? new UpstreamFailure("transport_failed");
    case "closed":
      return new UpstreamFailure("closed");
  }
}
