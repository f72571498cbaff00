/**
 * The upstream link: the byte- or message-level connection to the upstream
 * server. The stdio link (a child process), the HTTP link and the memory link
 * implement it; the upstream client of {@linkcode ./session.ts} runs on top.
 *
 * @module
 */

import type { JsonObject, Message, RequestId } from "../jsonrpc/message.ts";

/** A frame from the upstream server. */
export type UpstreamFrame =
  /** A JSON object (classified by the upstream client). */
  | { readonly kind: "message"; readonly value: JsonObject }
  /**
   * A line that is not a message, or that is longer than the line limit, with
   * the id that the scan found in it (`null`: none).
   */
  | { readonly kind: "invalid"; readonly id: RequestId | null };

/** How a link ended. */
export type LinkEnd =
  /** The child process stopped. `code` is its exit code, or null after a signal. */
  | { readonly kind: "exited"; readonly code: number | null }
  /** The connection closed, or the bridge closed it. */
  | { readonly kind: "closed" }
  /** The transport failed. */
  | { readonly kind: "failed" };

/** The connection to an upstream server. */
export interface UpstreamLink {
  /**
   * True for an upstream server that is not on this host (a URL, a transport
   * over a network): its icons do not get the trust of a local process.
   */
  readonly isRemote: boolean;
  /**
   * Reads the upstream server until the end of its output and gives each
   * frame to `onFrame` at once, in the order the server wrote them: an event
   * reaches the bridge before the next frame is read. Call it once.
   */
  read(onFrame: (frame: UpstreamFrame) => void): Promise<void>;
  /** Sends one message. Rejects when the link is closed. */
  send(message: Message): Promise<void>;
  /** Resolves once, when the link ends for any reason. */
  readonly ended: Promise<LinkEnd>;
  /** Closes the link; for a child, stops it (stdin closed, SIGTERM, SIGKILL). */
  close(): Promise<void>;
}
