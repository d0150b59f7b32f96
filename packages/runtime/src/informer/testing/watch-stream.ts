import type { WatchEvent } from '../../backend/index.ts';
import type { KubeObject } from '../../object/index.ts';

type Item<T extends KubeObject> =
  | { readonly kind: 'event'; readonly event: WatchEvent<T> | unknown }
  | { readonly kind: 'end' }
  | { readonly kind: 'error'; readonly error: Error };

interface Waiter<T extends KubeObject> {
  resolve(result: IteratorResult<WatchEvent<T>>): void;
  reject(error: unknown): void;
}

/**
 * One open watch of the fake backend: a push-driven async iterator. The backend pushes events,
 * an end or an error; the consumer pulls them in order. Whichever way it finishes (end, error,
 * `return()` from a `break`, or the consumer's signal) it calls `onClose` once.
 */
export class WatchStream<T extends KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  readonly allowBookmarks: boolean;
  readonly #queue: Item<T>[] = [];
  readonly #onClose: () => void;
  #waiter: Waiter<T> | undefined;
  #finished = false;
  #closed = false;

  constructor(allowBookmarks: boolean, onClose: () => void) {
    this.allowBookmarks = allowBookmarks;
    this.#onClose = onClose;
  }

  /** True once an end or error was pushed or the consumer stopped. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Events pushed but not yet pulled. */
  get queued(): number {
    return this.#queue.filter((item) => item.kind === 'event').length;
  }

  push(event: WatchEvent<T> | unknown): void {
    if (!this.#finished) this.#offer({ kind: 'event', event });
  }

  /** Ends the stream after what is queued; with `discardQueued`, drops that first (a lost connection). */
  end(discardQueued = false): void {
    if (this.#finished) return;
    if (discardQueued) this.#queue.length = 0;
    this.#finished = true;
    this.#offer({ kind: 'end' });
  }

  /** Fails the stream after what is queued. */
  fail(error: Error): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#offer({ kind: 'error', error });
  }

  next(): Promise<IteratorResult<WatchEvent<T>>> {
    const item = this.#queue.shift();
    if (item !== undefined) return this.#settle(item);
    if (this.#closed) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.#finished = true;
    this.#queue.length = 0;
    this.#close();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<WatchEvent<T>> {
    return this;
  }

  #offer(item: Item<T>): void {
    const waiter = this.#waiter;
    if (waiter === undefined) {
      this.#queue.push(item);
      return;
    }
    this.#waiter = undefined;
    this.#settle(item).then(waiter.resolve, waiter.reject);
  }

  #settle(item: Item<T>): Promise<IteratorResult<WatchEvent<T>>> {
    switch (item.kind) {
      case 'event':
        return Promise.resolve({ done: false, value: item.event as WatchEvent<T> });
      case 'end':
        this.#close();
        return Promise.resolve({ done: true, value: undefined });
      case 'error':
        this.#close();
        return Promise.reject(item.error);
    }
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve({ done: true, value: undefined });
    this.#onClose();
  }
}
