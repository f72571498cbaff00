/**
 * A bound on the POSTs that the HTTP link sends of its own accord: the
 * answers to the server's requests (ping) and the notifications. fetch has
 * no limit of connections per host, so over HTTP/1.1 each POST in flight
 * needs a connection (and a file descriptor). A server that floods a stream
 * with pings would otherwise open a connection per ping.
 *
 * The requests of the client are bounded elsewhere (`--max-in-flight`).
 *
 * @module
 */

/**
 * At most `max` tasks run at once; the others wait in order.
 * {@linkcode PostLimiter.room} lets the reader of a stream wait while the
 * queue is long, so that the queue of a flood stays small too.
 */
export class PostLimiter {
  readonly #max: number;
  #running = 0;
  #queue: (() => void)[] = [];
  #roomWaiters: (() => void)[] = [];

  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError("the limit of POSTs must be at least 1");
    this.#max = max;
  }

  /** Runs `task` when a place is free; resolves with its result. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#max) {
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    } else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#running--;
      if (this.#queue.length < this.#max) {
        for (const wake of this.#roomWaiters.splice(0)) wake();
      }
    }
  }

  /** Resolves when fewer tasks wait than run at most (at once when they do). */
  room(): Promise<void> {
    if (this.#queue.length < this.#max) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }
}
