/**
 * The seam between the front end and its face: where the messages for the
 * client go. Each message names the request of the client that it belongs
 * to, when there is one (its response, its progress, the input requests of
 * its rounds and their cancellations, `elicitation/complete`, the log
 * messages of its exchange). The stdio face writes every message as a line
 * and needs no such name; the HTTP face of `serve` sends a message of a
 * request on that request's stream, and the others on the session's own
 * stream.
 *
 * @module
 */

import type { ByteOutput } from "../jsonrpc/byte_io.ts";
import type { Message, RequestId } from "../jsonrpc/message.ts";
import { MessageWriter } from "../jsonrpc/writer.ts";
import { unwritableResponse } from "../errors/errors.ts";
import type { Logger } from "../log.ts";

/**
 * Sends a message for the client; `related` is the id of the client's request
 * that the message belongs to (the id of a response too), as the client sent
 * it, or undefined for a message of no request (list changes, updates, a log
 * message of no known request, the requests of an older upstream server).
 */
export type SendToClient = (message: Message, related?: RequestId) => void;

/**
 * A face of the front end: what it writes to the client, and its back
 * pressure.
 *
 * @example
 * ```ts
 * import type { ClientChannel } from "./channel.ts";
 * import type { Message, RequestId } from "../jsonrpc/message.ts";
 * // A face that keeps each message with the request that it belongs to.
 * const sent: [Message, RequestId | undefined][] = [];
 * const channel: ClientChannel = {
 *   send: (message, related) => void sent.push([message, related]),
 *   hold: () => undefined,
 *   close: () => Promise.resolve(),
 * };
 * channel.send({ jsonrpc: "2.0", id: 7, result: {} }, 7);
 * channel.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
 * if (sent[0]![1] !== 7 || sent[1]![1] !== undefined) throw new Error();
 * ```
 */
export interface ClientChannel {
  /** Queues one message; it never throws, and a message after the close is dropped. */
  readonly send: SendToClient;
  /**
   * Undefined while the client takes its messages; else a promise that
   * settles when it has taken enough. The reader of the client and the
   * reader of a link of this client alone wait for it.
   */
  hold(): Promise<void> | undefined;
  /**
   * The request `id` of the client is over without a response (it was
   * canceled): nothing more of it comes. The stdio face has nothing to end;
   * the HTTP face ends the request's stream, which would else stay open.
   */
  unanswered?(id: RequestId): void;
  /** Waits for the queued messages, then ends the face's output. */
  close(): Promise<void>;
}

/**
 * The stdio face: one line per message on `output`, in the order of the
 * calls (`MessageWriter`); a message that cannot be serialized becomes the
 * error response of its id.
 */
export function lineChannel(output: ByteOutput, log: Logger): ClientChannel {
  const writer = new MessageWriter(output, {
    replaceUnwritable: (message, error) => unwritableResponse(message, error, log),
  });
  return {
    send: (message) => writer.send(message),
    hold: () => writer.hold(),
    close: () => writer.close(),
  };
}
