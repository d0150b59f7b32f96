import type { ObjectEvent } from '../event/index.ts';

type Listener<T> = (event: ObjectEvent<T>) => void;

/**
 * The listener list of an event source: subscription order, safe against (un)subscribing while an
 * event is delivered, and a throwing listener never keeps the event from the others.
 */
export class Listeners<T> {
  readonly #listeners = new Set<{ readonly listener: Listener<T> }>();
  readonly #onError: (error: unknown, event: ObjectEvent<T>) => void;

  constructor(onError: (error: unknown, event: ObjectEvent<T>) => void) {
    this.#onError = onError;
  }

  get size(): number {
    return this.#listeners.size;
  }

  /** Adds a listener (the same function twice is two listeners); returns an idempotent remover. */
  add(listener: Listener<T>): () => void {
    const entry = { listener };
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Delivers `event` to the listeners subscribed when the call starts and still subscribed. */
  emit(event: ObjectEvent<T>): void {
    for (const entry of [...this.#listeners]) {
      if (!this.#listeners.has(entry)) continue;
      this.deliver(entry.listener, event);
    }
  }

  /** Delivers `event` to one listener, reporting what it throws. */
  deliver(listener: Listener<T>, event: ObjectEvent<T>): void {
    try {
      listener(event);
    } catch (error) {
      this.#onError(error, event);
    }
  }
}
