/** Why a waiting watch was woken. */
export type WakeReason = 'abort' | 'timeout' | 'bookmark' | 'expired';

/**
 * Wakes a loop that waits for a message when something else happens (the signal aborted, the
 * watch timed out, a bookmark is due, a stream check expired the watch). Reasons accumulate until
 * {@link Waker.take} collects them.
 */
export class Waker {
  #reasons = new Set<WakeReason>();
  #resolve: (() => void) | undefined;
  #promise: Promise<'wake'> | undefined;

  /** Records `reason` and wakes the waiter, if any. */
  fire(reason: WakeReason): void {
    this.#reasons.add(reason);
    const resolve = this.#resolve;
    this.#resolve = undefined;
    this.#promise = undefined;
    resolve?.();
  }

  /** Resolves `'wake'` once a reason is recorded (at once if one already is). */
  wait(): Promise<'wake'> {
    if (this.#reasons.size > 0) return Promise.resolve('wake');
    this.#promise ??= new Promise<'wake'>((resolve) => {
      this.#resolve = () => resolve('wake');
    });
    return this.#promise;
  }

  /** The reasons recorded since the last call, cleared. */
  take(): ReadonlySet<WakeReason> {
    const reasons = this.#reasons;
    this.#reasons = new Set();
    return reasons;
  }
}
