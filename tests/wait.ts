/**
 * Waiting in tests: poll a condition with a deadline instead of a fixed
 * sleep, so a test is as fast as the code and fails with a clear message.
 * The waits of the product that a signal ends are in lib/jsonrpc/abortable.ts;
 * these have none, because a test's wait ends at its deadline.
 */

/** Options of {@linkcode waitFor}. */
export interface WaitOptions {
  /** The deadline; 5 s by default. */
  readonly timeoutMs?: number;
  /** The time between two polls; 5 ms by default. */
  readonly intervalMs?: number;
}

/**
 * Polls `condition` until it returns a value other than `false`, `undefined`
 * or `null` and gives that value; throws with `what` after the deadline.
 */
export async function waitFor<T>(
  what: string,
  condition: () => T | false | undefined | null | Promise<T | false | undefined | null>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== false && value !== undefined && value !== null) return value;
    if (Date.now() >= deadline) throw new Error(`waitFor: no ${what} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 5));
  }
}

/**
 * Settles as `promise` does, or rejects with `what` after `ms`: a message
 * that never comes fails the test instead of hanging it.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}
