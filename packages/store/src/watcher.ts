import {
  ExpiredError,
  type KubeObject,
  type ResourceType,
  type Timer,
  type WatchEvent,
  type WatchOptions,
} from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import type { StoredEvent } from './event-log.ts';
import { scopeOf } from './list.ts';
import { parseResourceVersion, tooLarge, tooOld } from './resource-version.ts';
import { compileSelector, type Matcher } from './selection.ts';
import type { LogListener } from './type-data.ts';
import { convertEvent } from './watch-event.ts';

/** Kubernetes sends a bookmark this long before a watch's deadline. */
const PRE_DEADLINE_BOOKMARK_MS = 2_000;
const DONE: IteratorResult<WatchEvent> = Object.freeze({ done: true, value: undefined });

/**
 * One watch: an async iterator over a type's event log. It holds a cursor into the log instead of a
 * buffer of its own, so a slow consumer costs no memory of its own (the history it has still to
 * read is shared and bounded by `maxHistoryBytes`) until it falls `maxWatcherBuffer` events or
 * `maxWatcherBufferBytes` bytes behind — counting only the events it would deliver, so writes in
 * other namespaces or outside its selector never expire it — or behind the history window: then it
 * ends with an ExpiredError and the client relists.
 *
 * Start: with resourceVersion unset or '0', a synthetic ADDED per matching object (the current
 * state, read lazily from a snapshot taken when the watch opened), then — with `sendInitialEvents`
 * — a BOOKMARK marked `initialEventsEnd`, then live events. From N: the retained events after N,
 * then live ones (N older than the history: ExpiredError; N ahead of the store: wait up to
 * `tooLargeResourceVersionWaitMs`, then TimeoutError). Every error surfaces from `next()`.
 */
export class Watcher implements AsyncIterableIterator<WatchEvent>, LogListener {
  readonly #core: StoreCore;
  #td: ServedType | undefined;
  #matcher: Matcher;
  #lo = '';
  #hi: string | undefined;
  /** Events with a revision up to this one are not delivered. */
  #after = 0;
  /** The watch begins once the store reaches this revision. */
  #startAt: number | undefined;
  #initialEvents = false;
  #initial: KubeObject[] | undefined;
  #initialIndex = 0;
  #endBookmark: string | undefined;
  #cursor = 0;
  /**
   * The backlog this watch would deliver: events from the cursor up to `#counted` (absolute log
   * index) that pass its namespace and selector, counted once each as they are appended. Events of
   * other namespaces or not selected cost it nothing (kube-apiserver filters before buffering too).
   */
  #counted = 0;
  #pending = 0;
  #pendingBytes = 0;
  #endIndex: number | undefined;
  #bookmarkDue = false;
  #error: Error | undefined;
  #done = false;
  #wake: (() => void) | undefined;
  readonly #timers: Timer[] = [];
  #signal: AbortSignal | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #onAbort = (): void => this.#finish();
  readonly #onRevision = (): void => this.#wake?.();

  constructor(core: StoreCore, type: ResourceType, options: WatchOptions = {}) {
    this.#core = core;
    try {
      this.#open(type, options);
    } catch (error) {
      this.#error = error as Error;
      this.#detach();
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatchEvent>> {
    const result = this.#chain.then(() => this.#next());
    this.#chain = result.catch(() => undefined);
    return result;
  }

  return(): Promise<IteratorResult<WatchEvent>> {
    this.#finish();
    return Promise.resolve(DONE);
  }

  /** @internal */
  notify(): void {
    if (this.#startAt === undefined && this.#td !== undefined && !this.#done && this.#error === undefined) {
      const lag = this.#lag(this.#td);
      if (lag !== undefined) {
        this.#fail(
          new ExpiredError(`the watch fell more than ${lag} behind and was closed; relist and watch again`),
        );
        return;
      }
    }
    this.#wake?.();
  }

  /**
   * Which bound this watcher's unread deliverable events exceed, if any: `maxWatcherBuffer`
   * events, or `maxWatcherBufferBytes` bytes with more than one event unread (one large write alone
   * never expires a watcher that has read everything before it). Only events this watch would
   * deliver count; the others are skipped when it reads on.
   */
  #lag(td: ServedType): string | undefined {
    // A consumer waiting in next() had read everything: it reads on at once, nothing to count.
    if (this.#wake !== undefined) return undefined;
    const { maxWatcherBuffer, maxWatcherBufferBytes } = this.#core.options;
    for (let i = Math.max(this.#counted, this.#cursor); i < td.log.end; i++) {
      const event = td.log.at(i) as StoredEvent;
      if (this.#delivers(event)) {
        this.#pending++;
        this.#pendingBytes += event.size;
      }
    }
    this.#counted = td.log.end;
    if (this.#pending > maxWatcherBuffer) return `${maxWatcherBuffer} events`;
    if (this.#pending > 1 && this.#pendingBytes > maxWatcherBufferBytes)
      return `${maxWatcherBufferBytes} bytes`;
    return undefined;
  }

  /** Whether `event` (after the cursor) is one this watch sends. */
  #delivers(event: StoredEvent): boolean {
    return (
      event.revision > this.#after && convertEvent(event, this.#lo, this.#hi, this.#matcher) !== undefined
    );
  }

  /** @internal */
  closeAt(endIndex: number): void {
    this.#endIndex = endIndex;
    this.#wake?.();
  }

  /** @internal */
  end(): void {
    this.#finish();
  }

  #open(type: ResourceType, options: WatchOptions): void {
    const core = this.#core;
    const td = core.resolve(type);
    ({ lo: this.#lo, hi: this.#hi } = scopeOf(td, options.namespace));
    this.#matcher = compileSelector(options);
    const signal = options.signal;
    if (signal?.aborted === true) {
      this.#done = true;
      return;
    }
    const rv = options.resourceVersion ?? '';
    this.#initialEvents = options.sendInitialEvents ?? (rv === '' || rv === '0');
    this.#endBookmark = options.sendInitialEvents === true ? '' : undefined;
    if (rv === '' || rv === '0') this.#after = core.revision;
    else {
      const wanted = parseResourceVersion(rv);
      core.compact();
      if (!this.#initialEvents && wanted < core.timeline.compacted)
        throw tooOld(wanted, core.timeline.compacted);
      this.#after = this.#initialEvents ? 0 : wanted;
      if (wanted > core.revision) this.#startAt = wanted;
    }
    this.#td = td;
    td.listeners.add(this);
    if (this.#startAt === undefined) this.#begin();
    else {
      const wanted = this.#startAt;
      core.revisionListeners.add(this.#onRevision);
      this.#timers.push(
        core.options.clock.setTimer(() => {
          if (this.#startAt !== undefined) this.#fail(tooLarge(wanted, core.revision));
        }, core.options.tooLargeResourceVersionWaitMs),
      );
    }
    const { clock, bookmarkIntervalMs } = core.options;
    const timeoutMs = options.timeoutMs;
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs >= 0) {
      this.#timers.push(clock.setTimer(() => this.#finish(), timeoutMs));
    }
    if (options.allowBookmarks === true) {
      let first = bookmarkIntervalMs;
      if (timeoutMs !== undefined) first = Math.min(first, Math.max(0, timeoutMs - PRE_DEADLINE_BOOKMARK_MS));
      this.#scheduleBookmark(first);
    }
    if (signal !== undefined) {
      this.#signal = signal;
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** Starts the stream: a snapshot for initial events, and the log cursor. */
  #begin(): void {
    const td = this.#td as ServedType;
    this.#startAt = undefined;
    this.#core.revisionListeners.delete(this.#onRevision);
    if (this.#initialEvents) {
      const initial: KubeObject[] = [];
      td.liveKeys.walk(this.#lo, this.#hi, (key) => {
        initial.push(td.latest(key) as KubeObject);
        return true;
      });
      this.#initial = initial;
      if (this.#endBookmark !== undefined) this.#endBookmark = String(this.#core.revision);
      this.#after = this.#core.revision;
      this.#cursor = td.log.end;
    } else {
      this.#cursor = td.log.indexAfter(this.#after);
    }
    this.#counted = this.#cursor;
    this.#pending = 0;
    this.#pendingBytes = 0;
  }

  #scheduleBookmark(delayMs: number): void {
    this.#timers.push(
      this.#core.options.clock.setTimer(() => {
        if (this.#done) return;
        this.#bookmarkDue = true;
        this.#wake?.();
        this.#scheduleBookmark(this.#core.options.bookmarkIntervalMs);
      }, delayMs),
    );
  }

  async #next(): Promise<IteratorResult<WatchEvent>> {
    for (;;) {
      if (this.#error !== undefined) {
        const error = this.#error;
        this.#error = undefined;
        this.#finish();
        throw error;
      }
      if (this.#done) return DONE;
      const td = this.#td as ServedType;
      if (this.#startAt !== undefined) {
        if (this.#endIndex !== undefined) {
          this.#finish();
          continue;
        }
        if (this.#core.revision >= this.#startAt) this.#begin();
        else {
          await this.#sleep();
          continue;
        }
      }
      const initial = this.#initial;
      if (initial !== undefined) {
        while (this.#initialIndex < initial.length) {
          const object = initial[this.#initialIndex++] as KubeObject;
          if (this.#matcher === undefined || this.#matcher(object))
            return { done: false, value: { type: 'ADDED', object } };
        }
        this.#initial = undefined;
        if (this.#endBookmark !== undefined) {
          const resourceVersion = this.#endBookmark;
          this.#endBookmark = undefined;
          return { done: false, value: { type: 'BOOKMARK', resourceVersion, initialEventsEnd: true } };
        }
      }
      if (this.#cursor < td.log.start) {
        this.#fail(tooOld(this.#after, this.#core.timeline.compacted));
        continue;
      }
      const end = Math.min(td.log.end, this.#endIndex ?? Number.POSITIVE_INFINITY);
      while (this.#cursor < end) {
        const counted = this.#cursor < this.#counted;
        const event = td.log.at(this.#cursor++) as StoredEvent;
        const out = this.#convert(event);
        if (out === undefined) continue;
        if (counted) {
          this.#pending--;
          this.#pendingBytes -= event.size;
        }
        return { done: false, value: out };
      }
      if (this.#endIndex !== undefined) {
        this.#finish();
        continue;
      }
      if (this.#bookmarkDue) {
        this.#bookmarkDue = false;
        return { done: false, value: { type: 'BOOKMARK', resourceVersion: String(this.#core.revision) } };
      }
      await this.#sleep();
    }
  }

  #convert(event: StoredEvent): WatchEvent | undefined {
    if (event.revision <= this.#after) return undefined;
    this.#after = event.revision;
    return convertEvent(event, this.#lo, this.#hi, this.#matcher);
  }

  #sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
    });
  }

  #fail(error: Error): void {
    if (this.#done) return;
    this.#error = error;
    this.#detach();
    this.#wake?.();
  }

  #finish(): void {
    this.#done = true;
    this.#detach();
    this.#wake?.();
  }

  #detach(): void {
    this.#td?.listeners.delete(this);
    this.#core.revisionListeners.delete(this.#onRevision);
    for (const timer of this.#timers) timer.cancel();
    this.#timers.length = 0;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#signal = undefined;
  }
}
