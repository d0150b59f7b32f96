/**
 * Lets the event loop run (timers, I/O, other tasks) before going on: a macrotask boundary, not a
 * timer, so it takes no time on any clock. Long loops (a big list, a resync) call it every
 * {@link YIELD_EVERY} items so a sync never blocks the process for long.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Items handled between two yields in long loops. */
export const YIELD_EVERY = 1000;
