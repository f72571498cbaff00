/**
 * The two kinds of errors of the bridge: the wire error that the client gets
 * ({@linkcode BridgeError}, from the error table or from the upstream server)
 * and local failures, which are ordinary thrown `Error`s.
 *
 * @module
 */

import type { ErrorObject, Json, JsonObject, Message } from "../jsonrpc/message.ts";
import type { Logger } from "../log.ts";
import { type Cause, CODES, ERROR_TABLE } from "./error_table.ts";

/** Placeholders of the sign-in messages, such as `{port}`. */
export type Placeholders = Readonly<Record<string, string | number>>;

/**
 * A JSON-RPC error for the client. `cause` names the row of the error table;
 * `detail` adds facts such as the method and the limit of a timeout.
 *
 * @example
 * ```ts
 * import { BridgeError } from "./errors.ts";
 * const e = BridgeError.of("timeout", "method: tools/list, limit: 120 s");
 * if (e.toJSON().code !== -32603) throw new Error("expected -32603");
 * ```
 */
export class BridgeError extends Error {
  readonly code: number;
  readonly data: Json | undefined;
  /**
   * What the transport saw (a GOAWAY, a reset stream, a connection closed),
   * for the log line of the failure only: {@linkcode toJSON} leaves it out.
   */
  readonly seen: string | undefined;

  private constructor(code: number, message: string, data: Json | undefined, seen?: string) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    this.data = data;
    this.seen = seen;
  }

  /** The same error with what the transport saw, for the log line (not for the client). */
  withSeen(seen: string | undefined): BridgeError {
    return seen === undefined ? this : new BridgeError(this.code, this.message, this.data, seen);
  }

  /** An error of the table, with `data.cause` and an optional `data.detail`. */
  static of(
    cause: Exclude<Cause, "canceled">,
    detail?: string,
    values?: Placeholders,
  ): BridgeError {
    const row = ERROR_TABLE[cause];
    let message: string = row.message;
    for (const [key, value] of Object.entries(values ?? {})) {
      // A function, so that a `$&` in a value (a tool name) is not a pattern.
      message = message.replaceAll(`{${key}}`, () => String(value));
    }
    const data: JsonObject = detail === undefined ? { cause } : { cause, detail };
    return new BridgeError(row.code ?? CODES.INTERNAL_ERROR, message, data);
  }

  /** An error of the table with another code, such as the upstream code of discover_failed. */
  static withCode(cause: Exclude<Cause, "canceled">, code: number, detail?: string): BridgeError {
    const error = BridgeError.of(cause, detail);
    return new BridgeError(code, error.message, error.data);
  }

  /** An error as the upstream server (or the client) sent it. */
  static passthrough(error: ErrorObject): BridgeError {
    return new BridgeError(error.code, error.message, error.data);
  }

  /**
   * The answer of a request whose handling threw: -32603 with a fixed
   * message that holds no detail of the exception.
   */
  static internal(): BridgeError {
    return new BridgeError(CODES.INTERNAL_ERROR, "Internal error", undefined);
  }

  /** An error with its own code and message (the request-state rule). */
  static custom(code: number, message: string, data?: Json): BridgeError {
    return new BridgeError(code, message, data);
  }

  /** The error object of a JSON-RPC response. */
  toJSON(): ErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** The code -32042 is reserved in revision 2026-07-28; VS Code opens each URL in its data. */
export const RESERVED_URL_CODE = -32042;

/**
 * An upstream error for the client: code, message and data unchanged, except
 * -32042, which becomes -32603 with the upstream message and no data.
 */
export function fromUpstreamError(error: ErrorObject): BridgeError {
  if (error.code === RESERVED_URL_CODE) {
    return BridgeError.custom(CODES.INTERNAL_ERROR, error.message);
  }
  return BridgeError.passthrough(error);
}

/**
 * What goes out instead of a message that JSON.stringify cannot write: for
 * a response, the error invalid_response of its request; else nothing.
 *
 * @example
 * ```ts
 * import { unwritableResponse } from "./errors.ts";
 * import { SILENT_LOGGER } from "../log.ts";
 * const response = { jsonrpc: "2.0" as const, id: 4, result: { n: 1 } };
 * const instead = unwritableResponse(response, new RangeError("too deep"), SILENT_LOGGER);
 * if (!instead || !("error" in instead) || instead.id !== 4) throw new Error();
 * const data = instead.error.data as { cause: string };
 * if (data.cause !== "invalid_response") throw new Error();
 * const notification = { jsonrpc: "2.0" as const, method: "notifications/message" };
 * if (unwritableResponse(notification, new RangeError(), SILENT_LOGGER) !== undefined) {
 *   throw new Error();
 * }
 * ```
 */
export function unwritableResponse(
  message: Message,
  error: Error,
  log: Logger,
): Message | undefined {
  const id = "id" in message ? message.id : undefined;
  const isResponse = "result" in message || "error" in message;
  log.error(`cannot write a message to the client: ${error.name}`);
  if (!isResponse || id === undefined || id === null) return undefined;
  return { jsonrpc: "2.0", id, error: BridgeError.of("invalid_response").toJSON() };
}
