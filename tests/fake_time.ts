/**
 * A fake clock for the timing rules (after the design of denoland/std's
 * `FakeTime`, but injected as a {@linkcode Clock} instead of replacing the
 * global timers): time stands still until the test moves it with `tick`,
 * which runs the due timers in the order of their times.
 */

import type { Clock, TimerId } from "../lib/clock.ts";

interface Timer {
  readonly id: TimerId;
  readonly at: number;
  readonly fn: () => void;
  held: boolean;
}

/** Lets the promise chains and the I/O that a timer started go on (one real turn of the loop). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A {@linkcode Clock} whose time moves only with {@linkcode FakeTime.tick}. */
export class FakeTime implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<TimerId, Timer>();

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerId {
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + Math.max(0, ms), fn, held: true });
    return id;
  }

  clearTimeout(id: TimerId | undefined): void {
    if (id !== undefined) this.#timers.delete(id);
  }

  refTimer(id: TimerId): void {
    const timer = this.#timers.get(id);
    if (timer) timer.held = true;
  }

  unrefTimer(id: TimerId): void {
    const timer = this.#timers.get(id);
    if (timer) timer.held = false;
  }

  /** The times left until each armed timer, in order (the delays the code asked for). */
  get pending(): number[] {
    return [...this.#timers.values()].map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  /** How many armed timers keep the process alive. */
  get held(): number {
    return [...this.#timers.values()].filter((t) => t.held).length;
  }

  /**
   * Moves the time `ms` forward: each timer due on the way fires at its own
   * time, in the order of the times (then of the arming), and the promises
   * it started settle before the next one.
   */
  async tick(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      let first: Timer | undefined;
      for (const timer of this.#timers.values()) {
        if (timer.at <= target && (first === undefined || timer.at < first.at)) first = timer;
      }
      if (first === undefined) break;
      this.#timers.delete(first.id);
      this.#now = first.at;
      first.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Moves the time to the next armed timer and fires it (and any due with it). */
  async next(): Promise<void> {
    const wait = this.pending[0];
    if (wait === undefined) throw new Error("FakeTime: no timer is armed");
    await this.tick(wait);
  }
}
