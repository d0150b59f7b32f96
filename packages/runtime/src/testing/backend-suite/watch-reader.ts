import { expect } from 'vitest';
import type { Backend, ResourceType, WatchEvent, WatchOptions } from '../../backend/index.ts';
import type { KubeObject } from '../../object/index.ts';
import { within } from './helpers.ts';

/** A watch event that carries an object. */
export type ObjectEvent<T extends KubeObject> = Extract<WatchEvent<T>, { readonly object: T }>;

/** A BOOKMARK event. */
export type BookmarkEvent = Extract<WatchEvent, { readonly type: 'BOOKMARK' }>;

/**
 * Reads a backend watch with bounded waits: every read fails the test after `waitMs` instead of
 * hanging, and {@link WatchReader.close} always stops the watch. Open it in a `try` and close it in
 * `finally`.
 */
export class WatchReader<T extends KubeObject = KubeObject> {
  readonly #abort = new AbortController();
  readonly #iterator: AsyncIterator<WatchEvent<T>>;
  readonly #waitMs: number;
  /** A read that timed out; the next read continues it rather than starting a second one. */
  #pending: Promise<IteratorResult<WatchEvent<T>>> | undefined;

  constructor(backend: Backend, type: ResourceType, options: Omit<WatchOptions, 'signal'>, waitMs: number) {
    this.#waitMs = waitMs;
    const iterable = backend.watch<T>(type, { ...options, signal: this.#abort.signal });
    this.#iterator = iterable[Symbol.asyncIterator]();
  }

  /** The next raw result (events and the end of the stream); fails the test after the wait. */
  async nextResult(what: string, waitMs = this.#waitMs): Promise<IteratorResult<WatchEvent<T>>> {
    if (this.#pending === undefined) {
      const pending = this.#iterator.next();
      // A rejection after the test gave up on it must not become an unhandled rejection.
      pending.catch(() => {});
      this.#pending = pending;
    }
    const result = await within(this.#pending, waitMs, what);
    this.#pending = undefined;
    return result;
  }

  /** The next event of any type, BOOKMARK included; fails if the stream ends. */
  async nextEvent(what: string, waitMs?: number): Promise<WatchEvent<T>> {
    const result = await this.nextResult(what, waitMs);
    if (result.done === true) return expect.fail(`the watch ended while waiting for ${what}`);
    return result.value;
  }

  /** The next ADDED / MODIFIED / DELETED event, skipping bookmarks (clients must tolerate them). */
  async next(what: string): Promise<ObjectEvent<T>> {
    for (;;) {
      const event = await this.nextEvent(what);
      if (event.type !== 'BOOKMARK') return event;
    }
  }

  /** The next event, which must be of `type` for the object named `name`. */
  async expect(type: ObjectEvent<T>['type'], name: string): Promise<T> {
    const event = await this.next(`${type} ${name}`);
    expect(
      { type: event.type, name: event.object.metadata.name },
      `expected ${type} ${name}, got ${event.type} ${event.object.metadata.name}`,
    ).toEqual({ type, name });
    return event.object;
  }

  /** Reads `count` object events (bookmarks skipped). */
  async take(count: number, what: string): Promise<ObjectEvent<T>[]> {
    const events: ObjectEvent<T>[] = [];
    while (events.length < count)
      events.push(await this.next(`${what} (event ${events.length + 1} of ${count})`));
    return events;
  }

  /** Expects the stream to end cleanly (bookmarks before the end are skipped). */
  async expectEnd(what: string, waitMs?: number): Promise<void> {
    for (;;) {
      const result = await this.nextResult(what, waitMs);
      if (result.done === true) return;
      if (result.value.type !== 'BOOKMARK') {
        const { type, object } = result.value;
        expect.fail(`expected ${what}, got ${type} ${object.metadata.name}`);
      }
    }
  }

  /** Aborts the watch's signal (what a caller does to stop watching). */
  abort(): void {
    this.#abort.abort();
  }

  /** Stops the watch: aborts its signal and returns the iterator, never hanging or throwing. */
  async close(): Promise<void> {
    this.#abort.abort();
    const returned = this.#iterator.return?.();
    if (returned === undefined) return;
    returned.catch(() => {});
    await within(returned, this.#waitMs, 'the watch iterator to return').catch(() => {});
  }
}

/**
 * Opens a watch, runs `body` with its reader and always closes it.
 *
 * @example
 * await watching(backend, suiteTypes.configMap, { resourceVersion }, waitMs, async (watch) => {
 *   await watch.expect('ADDED', 'cm-a');
 * });
 */
export async function watching<T extends KubeObject = KubeObject>(
  backend: Backend,
  type: ResourceType,
  options: Omit<WatchOptions, 'signal'>,
  waitMs: number,
  body: (reader: WatchReader<T>) => Promise<void>,
): Promise<void> {
  const reader = new WatchReader<T>(backend, type, options, waitMs);
  try {
    await body(reader);
  } finally {
    await reader.close();
  }
}
