/**
 * The clock of the timing rules (the time limits of the requests, the waits
 * of the listen stream, the lock of the token store): the real one by
 * default, a fake one in tests so that a rule of seconds runs in no time.
 *
 * @module
 */

/** A timer of a {@linkcode Clock}. */
export type TimerId = number;

/** What the timing rules read of the time. */
export interface Clock {
  /** Milliseconds, only to compare with another `now` of the same clock. */
  now(): number;
  /** Calls `fn` after `ms`. */
  setTimeout(fn: () => void, ms: number): TimerId;
  clearTimeout(id: TimerId | undefined): void;
  /** Lets the timer keep the process alive again (after {@linkcode Clock.unrefTimer}). */
  refTimer(id: TimerId): void;
  /** The timer no longer keeps the process alive. */
  unrefTimer(id: TimerId): void;
}

/**
 * The real clock: `performance.now` and the timers of Deno.
 *
 * @example
 * ```ts
 * import { REAL_CLOCK } from "./clock.ts";
 * const start = REAL_CLOCK.now();
 * await new Promise((resolve) => REAL_CLOCK.setTimeout(() => resolve(undefined), 5));
 * if (REAL_CLOCK.now() - start < 4) throw new Error();
 * ```
 */
export const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  // Deno's timers are numbers; the Node types of the project call them Timeout.
  setTimeout: (fn, ms) => setTimeout(fn, ms) as unknown as number,
  clearTimeout: (id) => clearTimeout(id),
  refTimer: (id) => Deno.refTimer(id),
  unrefTimer: (id) => Deno.unrefTimer(id),
};
