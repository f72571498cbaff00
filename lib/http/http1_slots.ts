/**
 * HTTP/1.1 connections kept alive, at most one for each request in flight.
 *
 * **Why.** One `Deno.HttpClient` keeps a pool of connections, but a request
 * that finds none idle starts a new connection and also waits for one to
 * come back; when another request's connection comes back first, the
 * request takes it and the new connection goes into the pool unused. At 64
 * requests in flight through a 20 ms round trip, a run opened 65 to 91
 * connections (measured: a third of the runs opened more than 64).
 *
 * **How.** Each request takes a client of its own (a slot) that serves no
 * other request until the body of its response has ended: a slot has at
 * most one connection, and it is in use or idle, never raced. A request
 * takes the slot that was used last, whose connection is the likeliest to
 * be alive; a slot unused for longer than the pool's idle time has lost its
 * connection anyway and is closed then, by a timer that does not keep the
 * process alive (each client holds about 125 KB: the memory of a burst goes
 * back after it).
 *
 * @module
 */

import { type Clock, REAL_CLOCK, type TimerId } from "../clock.ts";

/** A client that serves one request at a time, and its return. */
export interface Http1Slot {
  readonly client: Deno.HttpClient;
  /** Gives the slot back (once the response's body has ended, or the request failed). */
  release(): void;
}

interface Idle {
  readonly client: Deno.HttpClient;
  readonly since: number;
}

/** The slots of one link's HTTP/1.1 connections. */
export class Http1Slots {
  readonly #make: () => Deno.HttpClient;
  readonly #idleMs: number;
  readonly #clock: Clock;
  /** The idle slots, the one used last at the end. */
  #idle: Idle[] = [];
  readonly #busy = new Set<Deno.HttpClient>();
  #closed = false;
  /** The timer that closes the oldest idle slot when its idle time has passed. */
  #pruneTimer: TimerId | undefined;

  /**
   * @param make makes a client with at most one idle connection (`poolMaxIdlePerHost: 1`)
   * @param idleMs the pool's idle time: a slot idle for longer is closed
   * @param clock the real clock, a fake one in tests
   */
  constructor(make: () => Deno.HttpClient, idleMs: number, clock: Clock = REAL_CLOCK) {
    this.#make = make;
    this.#idleMs = idleMs;
    this.#clock = clock;
  }

  /** The slots that serve a request now (for tests). */
  get busy(): number {
    return this.#busy.size;
  }

  /** The idle slots kept (for tests). */
  get idle(): number {
    return this.#idle.length;
  }

  /** A slot for one request: the idle one used last, else a new one. Never waits. */
  take(): Http1Slot {
    if (this.#closed) throw new Error("the HTTP/1.1 slots are closed");
    this.#prune();
    const client = this.#idle.pop()?.client ?? this.#make();
    this.#busy.add(client);
    let released = false;
    return {
      client,
      release: () => {
        if (released) return;
        released = true;
        this.#busy.delete(client);
        if (this.#closed) return;
        this.#idle.push({ client, since: this.#clock.now() });
        this.#prune();
      },
    };
  }

  /**
   * Closes the slots idle for longer than the pool's idle time (the oldest
   * first), and sets the timer for the next one.
   */
  #prune(): void {
    const limit = this.#clock.now() - this.#idleMs;
    let stale = 0;
    while (stale < this.#idle.length && this.#idle[stale]!.since < limit) {
      this.#idle[stale]!.client.close();
      stale++;
    }
    if (stale > 0) this.#idle = this.#idle.slice(stale);
    const oldest = this.#idle[0];
    if (oldest === undefined || this.#pruneTimer !== undefined) return;
    this.#pruneTimer = this.#clock.setTimeout(() => {
      this.#pruneTimer = undefined;
      if (!this.#closed) this.#prune();
    }, Math.max(0, oldest.since + this.#idleMs + 1 - this.#clock.now()));
    this.#clock.unrefTimer(this.#pruneTimer);
  }

  /** Ends every connection, busy or idle; no slot is taken after this. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.clearTimeout(this.#pruneTimer);
    for (const { client } of this.#idle) client.close();
    for (const client of this.#busy) client.close();
    this.#idle = [];
    this.#busy.clear();
  }
}
