/**
 * Lets pending work run: `rounds` macrotask turns, each after every pending promise continuation.
 * Informers yield to the event loop between list pages and during long batches, so a test drives
 * them with this (and `VirtualClock.advance` for time) instead of sleeping.
 *
 * @example
 * void informer.start(signal);
 * await settle();
 * expect(informer.hasSynced()).toBe(true);
 */
export async function settle(rounds = 25): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
