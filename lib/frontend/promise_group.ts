/**
 * A group of promises of one connection (not MCP tasks): each job runs on
 * its own, and the shutdown waits for all of them for at most a grace.
 *
 * @module
 */

/** The jobs in flight of a connection. */
export class PromiseGroup {
  readonly #tasks = new Set<Promise<void>>();

  /**
   * Runs `task`; `onError` gets what it throws (the task never rejects the
   * caller); `after` runs last, once both are done.
   */
  run(task: () => Promise<void>, onError: (error: unknown) => void, after?: () => void): void {
    const promise = task().catch(onError).then(after).finally(() => this.#tasks.delete(promise));
    this.#tasks.add(promise);
  }

  /**
   * Waits for every task (and `also`) for at most `ms`; the timer never
   * outlives the wait.
   *
   * @example
   * ```ts
   * import { PromiseGroup } from "./promise_group.ts";
   * const tasks = new PromiseGroup();
   * tasks.run(() => new Promise(() => {}), () => {});
   * await tasks.settled(10); // returns after 10 ms: the task never ends
   * ```
   */
  async settled(ms: number, also?: Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
    await Promise.race([Promise.allSettled([...this.#tasks, also]), grace]);
    clearTimeout(timer);
  }
}
