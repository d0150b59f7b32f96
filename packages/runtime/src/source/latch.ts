import { AbortedError } from '../errors.ts';

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * A one-shot gate: pending until `open()` (every wait resolves) or `fail(error)` (every wait
 * rejects), whichever comes first; then it stays that way.
 */
export class Latch {
  #state: 'pending' | 'open' | 'failed' = 'pending';
  #error: Error | undefined;
  readonly #waiters = new Set<Waiter>();

  get isOpen(): boolean {
    return this.#state === 'open';
  }

  open(): void {
    if (this.#state !== 'pending') return;
    this.#state = 'open';
    for (const waiter of [...this.#waiters]) waiter.resolve();
  }

  fail(error: Error): void {
    if (this.#state !== 'pending') return;
    this.#state = 'failed';
    this.#error = error;
    for (const waiter of [...this.#waiters]) waiter.reject(error);
  }

  /** Resolves once open; rejects if it failed, or with an AbortedError when `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    if (this.#state === 'failed') return Promise.reject(this.#error as Error);
    if (signal?.aborted) return Promise.reject(new AbortedError('wait aborted', { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(new AbortedError('wait aborted', { cause: signal?.reason }));
      };
      const settle = (): void => {
        this.#waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          settle();
          resolve();
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
