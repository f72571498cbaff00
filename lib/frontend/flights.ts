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

/**
 * The table of the requests in flight. A request that the client cancels
 * leaves the count at once (it gets no response, and its id is free): the
 * next request of the same read takes its slot. Until its task ends, it
 * counts among the draining ones, which have a bound of their own: at most
 * `max` in flight and `2 × max` tasks in all, so a client that cancels and
 * sends again faster than the tasks end cannot hold more than twice what
 * the limit promises. What a draining task still has in the upstream
 * link's queue, the link bounds in bytes.
 */
export class Flights {
  readonly #max: number;
  readonly #flights = new Map<string, Flight>();
  /** The flights that the client canceled, whose tasks have not ended. */
  readonly #draining = new Set<Flight>();

  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Adds a flight, or gives the error for the client at once: above the
   * limit (or with `max` canceled tasks still ending beside a full table),
   * `too_many_requests`; for an id that is in flight already,
   * `invalid_request_shape`.
   */
  add(id: RequestId, method: string): Flight | BridgeError {
    const inFlight = this.#flights.size;
    if (inFlight >= this.#max || inFlight + this.#draining.size >= 2 * this.#max) {
      return BridgeError.of("too_many_requests");
    }
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

  /** The requests in flight now (not those that drain after their cancel). */
  get size(): number {
    return this.#flights.size;
  }

  /** The task of a flight ended. */
  remove(flight: Flight): void {
    if (this.#draining.delete(flight)) return;
    const key = idKey(flight.id);
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
  }

  /**
   * Cancels one flight: it gets no response, the reason goes upstream, and
   * it no longer counts as in flight.
   */
  cancel(id: RequestId, reason: string): void {
    const key = idKey(id);
    const flight = this.#flights.get(key);
    if (!flight) return;
    this.#flights.delete(key);
    this.#draining.add(flight);
    flight.canceled = true;
    flight.controller.abort(reason);
  }

  /** Cancels every flight (the end of the input: no request comes after it). */
  cancelAll(reason: string): void {
    for (const flight of this.#flights.values()) {
      flight.canceled = true;
      flight.controller.abort(reason);
    }
  }
}
