import { AbortedError } from '../errors.ts';

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

type GateState =
  | { readonly kind: 'pending' }
  | { readonly kind: 'open' }
  | { readonly kind: 'failed'; readonly error: Error };

/**
 * A one-shot gate for "has synced": pending until `open()` or `fail(error)`, whichever comes first,
 * and then it stays that way. Waiters leave when their signal aborts, so nothing leaks.
 */
export class SyncGate {
  #state: GateState = { kind: 'pending' };
  readonly #waiters = new Set<Waiter>();

  get isOpen(): boolean {
    return this.#state.kind === 'open';
  }

  get isPending(): boolean {
    return this.#state.kind === 'pending';
  }

  open(): void {
    if (this.#state.kind !== 'pending') return;
    this.#state = { kind: 'open' };
    for (const waiter of [...this.#waiters]) waiter.resolve();
  }

  fail(error: Error): void {
    if (this.#state.kind !== 'pending') return;
    this.#state = { kind: 'failed', error };
    for (const waiter of [...this.#waiters]) waiter.reject(error);
  }

  /** Resolves once open; rejects once failed, or with an AbortedError when `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<void> {
    const state = this.#state;
    if (state.kind === 'open') return Promise.resolve();
    if (state.kind === 'failed') return Promise.reject(state.error);
    if (signal?.aborted)
      return Promise.reject(new AbortedError('wait for sync aborted', { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(waiter);
        reject(new AbortedError('wait for sync aborted', { cause: signal?.reason }));
      };
      const leave = (): void => {
        this.#waiters.delete(waiter);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        resolve: () => {
          leave();
          resolve();
        },
        reject: (error) => {
          leave();
          reject(error);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
