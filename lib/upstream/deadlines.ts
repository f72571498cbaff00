/**
 * The time limits of the requests in flight, with one timer. A timer per
 * request was 8% of the busy time of the bridge under load: each request
 * armed a 1 h `setTimeout` and cleared it a millisecond later. Requests of
 * one limit end in the order they started, so each limit keeps its
 * deadlines in insertion order, and one timer waits for the earliest head.
 *
 * When the last deadline is canceled, the timer stays armed but no longer
 * keeps the process alive (it is unref'd), and a later request re-refs it
 * instead of a clear and a new `setTimeout`: a request at a time (the usual
 * pattern of a chat client) costs no timer call at all. A `setTimeout` and
 * its clear cost about 3 µs and two allocations of Deno's Node-compatible
 * timers. The timer ends when it fires with nothing left, or at
 * {@linkcode Deadlines.close}.
 *
 * @module
 */

import { type Clock, REAL_CLOCK, type TimerId } from "../clock.ts";

/** Options of {@linkcode Deadlines}. */
export interface DeadlinesOptions {
  /** The clock of the timer; the real one by default (a fake one in tests). */
  readonly clock?: Clock;
}

/** One armed deadline; give it back to {@linkcode Deadlines.cancel}. */
export interface Deadline {
  readonly at: number;
  readonly fire: () => void;
  readonly queue: Set<Deadline>;
}

/**
 * The deadlines of one upstream client.
 */
export class Deadlines {
  /** For each limit in ms, its deadlines in the order they were armed (the earliest first). */
  readonly #queues = new Map<number, Set<Deadline>>();
  #size = 0;
  #timer: TimerId | undefined;
  #armedFor = Infinity;
  readonly #clock: Clock;

  constructor(options: DeadlinesOptions = {}) {
    this.#clock = options.clock ?? REAL_CLOCK;
  }

  /** How many deadlines are armed. */
  get size(): number {
    return this.#size;
  }

  /** Whether a timer exists, and whether it holds the process (for the tests). */
  get timer(): "none" | "held" | "idle" {
    if (this.#timer === undefined) return "none";
    return this.#size === 0 ? "idle" : "held";
  }

  /** Calls `fire` after `ms`, unless the deadline is canceled first. */
  add(ms: number, fire: () => void): Deadline {
    let queue = this.#queues.get(ms);
    if (!queue) {
      queue = new Set();
      this.#queues.set(ms, queue);
    }
    const deadline: Deadline = { at: this.#clock.now() + ms, fire, queue };
    queue.add(deadline);
    // A timer with no deadline is the unref'd one that the last cancel left.
    const idle = this.#size++ === 0 && this.#timer !== undefined;
    if (deadline.at < this.#armedFor) this.#arm(deadline.at);
    else if (idle) this.#clock.refTimer(this.#timer!);
    return deadline;
  }

  /**
   * Cancels a deadline. After the last one the timer no longer holds the
   * process: an idle bridge exits as if it had no timer.
   */
  cancel(deadline: Deadline): void {
    if (!deadline.queue.delete(deadline)) return;
    if (--this.#size === 0 && this.#timer !== undefined) {
      this.#clock.unrefTimer(this.#timer);
    }
  }

  /** Stops the timer; later deadlines arm a new one. */
  close(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  #arm(at: number): void {
    this.#clock.clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = this.#clock.setTimeout(() => this.#tick(), Math.max(0, at - this.#clock.now()));
  }

  #tick(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.now();
    let next = Infinity;
    const due: Deadline[] = [];
    for (const queue of this.#queues.values()) {
      for (const deadline of queue) {
        if (deadline.at > now) {
          next = Math.min(next, deadline.at);
          break;
        }
        queue.delete(deadline);
        this.#size--;
        due.push(deadline);
      }
    }
    if (next !== Infinity) this.#arm(next);
    // A late timer can find deadlines of several limits due: they fire in the order of their times.
    due.sort((a, b) => a.at - b.at);
    for (const deadline of due) deadline.fire();
  }
}
