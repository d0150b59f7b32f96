import {
  BadRequestError,
  ExpiredError,
  InternalError,
  type WatchEvent,
  type WatchOptions,
} from '../../../backend/index.ts';
import type { Clock, Timer } from '../../../clock/index.ts';
import type { KubeObject } from '../../../object/index.ts';
import { clone } from './json.ts';
import { compileSelection, type ObjectMatcher } from './selectors.ts';
import type { LogEntry, VersionedStore } from './store.ts';

/** An async iterator fed by pushes: events queue until read; ending or failing wakes a waiting read. */
export class WatchStream<T extends KubeObject = KubeObject> implements AsyncIterableIterator<WatchEvent<T>> {
  #queue: WatchEvent<T>[] = [];
  #waiter: { resolve: (r: IteratorResult<WatchEvent<T>>) => void; reject: (e: Error) => void } | undefined;
  #error: Error | undefined;
  #ended = false;
  readonly #cleanups: (() => void)[] = [];

  get ended(): boolean {
    return this.#ended;
  }

  /** Runs `cleanup` when the stream ends (at once if it has). */
  onEnd(cleanup: () => void): void {
    if (this.#ended) cleanup();
    else this.#cleanups.push(cleanup);
  }

  push(event: WatchEvent<T>): void {
    if (this.#ended) return;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter === undefined) this.#queue.push(event);
    else waiter.resolve({ done: false, value: event });
  }

  /** Ends the stream cleanly after the queued events. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve({ done: true, value: undefined });
  }

  /** Ends the stream with `error`, thrown by the read after the queued events. */
  fail(error: Error): void {
    if (this.#ended) return;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    this.end();
    if (waiter !== undefined) {
      this.#error = undefined;
      waiter.reject(error);
    }
  }

  next(): Promise<IteratorResult<WatchEvent<T>>> {
    const event = this.#queue.shift();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.#error !== undefined) {
      const error = this.#error;
      this.#error = undefined;
      return Promise.reject(error);
    }
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<WatchEvent<T>>> {
    this.#queue = [];
    this.#error = undefined;
    this.end();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** What a watch needs from the backend. */
export interface WatchHost {
  readonly store: VersionedStore;
  readonly clock: Clock;
  readonly bookmarkIntervalMs: number;
  /** Registers a stream so closing the backend ends it. */
  track(stream: WatchStream): void;
}

function withRevision(object: KubeObject, rev: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(rev) } };
}

/** The event a watcher with `matches` sees for one committed change, if any. */
function toEvent(
  entry: LogEntry,
  matches: ObjectMatcher,
  copy: (object: KubeObject) => KubeObject,
): WatchEvent | undefined {
  const was = entry.prev !== undefined && matches(entry.prev);
  const is = entry.next !== undefined && matches(entry.next);
  if (is && entry.next !== undefined) return { type: was ? 'MODIFIED' : 'ADDED', object: copy(entry.next) };
  // Deleted, or left the selection: the previous state with this change's revision.
  if (was && entry.prev !== undefined)
    return { type: 'DELETED', object: copy(withRevision(entry.prev, entry.rev)) };
  return undefined;
}

/** Errors thrown inside the backend are Errors; anything else is wrapped. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new InternalError(String(error), { cause: error });
}

function parseRevision(rv: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(rv))
    throw new BadRequestError(`invalid resourceVersion ${JSON.stringify(rv)}`);
  return Number(rv);
}

/**
 * Starts a watch of one type: replays the log after `resourceVersion` (or sends the current state
 * as ADDED events), then follows live commits. Errors are thrown by the first read. Each object is
 * handed out as `copy` makes it (default a deep clone; a metadata-only watch clones only metadata).
 */
export function startWatch<T extends KubeObject>(
  host: WatchHost,
  typeId: string,
  options: WatchOptions,
  copy: (object: KubeObject) => KubeObject = clone,
): WatchStream<T> {
  const stream = new WatchStream<T>();
  const { store, clock } = host;
  try {
    const matches = compileSelection(options);
    const { resourceVersion, signal } = options;
    if (signal?.aborted === true) {
      stream.end();
      return stream;
    }
    const deliver = (entry: LogEntry): void => {
      if (entry.typeId !== typeId) return;
      const event = toEvent(entry, matches, copy);
      if (event !== undefined) stream.push(event as WatchEvent<T>);
    };
    const initial =
      resourceVersion === undefined ||
      resourceVersion === '' ||
      resourceVersion === '0' ||
      options.sendInitialEvents === true;
    if (initial) {
      const at = store.revision;
      for (const { object } of store.snapshot(typeId, at)) {
        if (matches(object)) stream.push({ type: 'ADDED', object: copy(object) as T });
      }
      if (options.sendInitialEvents === true) {
        stream.push({ type: 'BOOKMARK', resourceVersion: String(at), initialEventsEnd: true });
      }
    } else {
      const from = parseRevision(resourceVersion);
      if (from < store.compacted) {
        throw new ExpiredError(`too old resource version: ${from} (${store.compacted})`);
      }
      for (const entry of store.entriesAfter(from)) deliver(entry);
    }
    stream.onEnd(store.subscribe(deliver));
    if (signal !== undefined) {
      const onAbort = (): void => stream.end();
      signal.addEventListener('abort', onAbort, { once: true });
      stream.onEnd(() => signal.removeEventListener('abort', onAbort));
    }
    if (options.timeoutMs !== undefined) {
      const timer = clock.setTimer(() => stream.end(), options.timeoutMs);
      stream.onEnd(() => timer.cancel());
    }
    if (options.allowBookmarks === true) {
      let timer: Timer | undefined;
      const tick = (): void => {
        stream.push({ type: 'BOOKMARK', resourceVersion: String(store.revision) });
        timer = clock.setTimer(tick, host.bookmarkIntervalMs);
      };
      timer = clock.setTimer(tick, host.bookmarkIntervalMs);
      stream.onEnd(() => timer?.cancel());
    }
    host.track(stream as unknown as WatchStream);
  } catch (error) {
    stream.fail(asError(error));
  }
  return stream;
}
