/**
 * The upstream link: the connection to the upstream server. The stdio link
 * (a child process), the HTTP link (a URL) and the memory link (a server in
 * the same process) implement it; the upstream client of
 * {@linkcode ./client.ts} runs on top.
 *
 * @module
 */

import type { JsonObject, Message, RequestId } from "../jsonrpc/message.ts";
import type { UpstreamFailure } from "./failure.ts";

/** A frame from the upstream server. */
export type UpstreamFrame =
  /** A JSON object (classified by the upstream client). */
  | { readonly kind: "message"; readonly value: JsonObject }
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

/** How a link ended. `failureOfEnd` of `./failure.ts` maps it, in one place. */
export type LinkEnd =
  /** The child process stopped. `code` is its exit code, or null after a signal. */
  | { readonly kind: "exited"; readonly code: number | null }
  /** The connection closed, or the bridge closed it. */
  | { readonly kind: "closed" }
  /** The transport failed; `failure` says how, when the link knows. */
  | { readonly kind: "failed"; readonly failure?: UpstreamFailure };

/** What the client answered to a URL that the sign-in asked it to open. */
export type UrlPromptAnswer = "accept" | "decline" | "cancel";

/**
 * Asks the client to open a URL with a URL elicitation (a later sign-in).
 * The front end gives it to the link once the client can answer one.
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
 */
export type FrameSink = (frame: UpstreamFrame) => void | Promise<void>;

/** The connection to an upstream server. */
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
 */
export type Connect = () => Promise<UpstreamLink>;
