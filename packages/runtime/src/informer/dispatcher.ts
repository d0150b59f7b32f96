import type { ObjectEvent } from '../event/index.ts';
import { YIELD_EVERY, yieldToEventLoop } from './yield.ts';

type Listener<T> = (event: ObjectEvent<T>) => void;

/** One subscription (the same function subscribed twice is two). */
export interface Entry<T> {
  readonly listener: Listener<T>;
}

/**
 * Delivers an informer's events to its listeners. A listener that throws is reported and the event
 * still reaches the others; nothing a listener does reaches the informer. Long batches (a list, a
 * resync) yield to the event loop as they go and are delivered only to the listeners subscribed
 * when the batch began: a listener subscribing halfway got the cache replayed already.
 */
export class Dispatcher<T> {
  readonly #entries = new Set<Entry<T>>();
  readonly #onError: (error: unknown, event: ObjectEvent<T>) => void;

  constructor(onError: (error: unknown, event: ObjectEvent<T>) => void) {
    this.#onError = onError;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Delivers `replay` to the new listener first (synchronously, so no event can come between),
   * then subscribes it. Returns an idempotent unsubscribe.
   */
  subscribe(listener: Listener<T>, replay: Iterable<ObjectEvent<T>>): () => void {
    const entry: Entry<T> = { listener };
    for (const event of replay) this.#deliver(listener, event);
    this.#entries.add(entry);
    return () => {
      this.#entries.delete(entry);
    };
  }

  /** Delivers one event to every listener subscribed now. */
  emit(event: ObjectEvent<T>): void {
    for (const entry of [...this.#entries]) {
      if (this.#entries.has(entry)) this.#deliver(entry.listener, event);
    }
  }

  /** The listeners subscribed now: the audience of a batch that is about to be decided. */
  snapshot(): readonly Entry<T>[] {
    return [...this.#entries];
  }

  /**
   * Delivers a batch to `targets` (a {@link Dispatcher.snapshot}) that are still subscribed,
   * yielding to the event loop every {@link YIELD_EVERY} events. Stops early when `signal` aborts.
   * Returns the number of events delivered.
   */
  async emitBatch(
    targets: readonly Entry<T>[],
    events: Iterable<ObjectEvent<T>>,
    signal: AbortSignal,
  ): Promise<number> {
    if (targets.length === 0) return 0;
    let delivered = 0;
    for (const event of events) {
      if (signal.aborted) break;
      for (const entry of targets) if (this.#entries.has(entry)) this.#deliver(entry.listener, event);
      if (++delivered % YIELD_EVERY === 0) await yieldToEventLoop();
    }
    return delivered;
  }

  #deliver(listener: Listener<T>, event: ObjectEvent<T>): void {
    try {
      const result: unknown = listener(event);
      // A listener typed `void` may still be async: report its rejection instead of leaving it unhandled.
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        (result as PromiseLike<unknown>).then(undefined, (error: unknown) => this.#report(error, event));
      }
    } catch (error) {
      this.#report(error, event);
    }
  }

  #report(error: unknown, event: ObjectEvent<T>): void {
    try {
      this.#onError(error, event);
    } catch {
      // The error hook itself failed; there is nowhere left to report it.
    }
  }
}
