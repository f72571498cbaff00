/**
 * The requests of the client in flight: at most a limit of them, each with
 * the AbortController that cancels it upstream.
 *
 * @module
 */

import { idKey, type RequestId } from "../jsonrpc/message.ts";
import { BridgeError } from "../errors/errors.ts";

/** A request of the client in flight. */
export interface Flight {
  readonly id: RequestId;
  readonly method: string;
  readonly controller: AbortController;
  /** Canceled by the client or by the end of the input: it gets no response. */
  canceled: boolean;
  /** Its one response went out. */
  answered: boolean;
}

/** The table of the requests in flight. */
export class Flights {
  readonly #max: number;
  readonly #flights = new Map<string, Flight>();

  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Adds a flight, or gives the error for the client at once: above the
   * limit, `too_many_requests`; for an id that is in flight already,
   * `invalid_request_shape`.
   */
  add(id: RequestId, method: string): Flight | BridgeError {
    if (this.#flights.size >= this.#max) return BridgeError.of("too_many_requests");
    const key = idKey(id);
    if (this.#flights.has(key)) {
      return BridgeError.of("invalid_request_shape", "the id belongs to a request in flight");
    }
    const flight: Flight = {
      id,
      method,
      controller: new AbortController(),
      canceled: false,
      answered: false,
    };
    this.#flights.set(key, flight);
    return flight;
  }

  /** The requests in flight now. */
  get size(): number {
    return this.#flights.size;
  }

  remove(flight: Flight): void {
    const key = idKey(flight.id);
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
  }

  /** Cancels one flight: it gets no response; the reason goes upstream. */
  cancel(id: RequestId, reason: string): void {
    const flight = this.#flights.get(idKey(id));
    if (!flight || flight.canceled) return;
    flight.canceled = true;
    flight.controller.abort(reason);
  }

  /** Cancels every flight. */
  cancelAll(reason: string): void {
    for (const flight of this.#flights.values()) {
      flight.canceled = true;
      flight.controller.abort(reason);
    }
  }
}
