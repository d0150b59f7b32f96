import { jitter } from '../clock/index.ts';
import { AbortedError } from '../errors.ts';
import type { EventSource, ObjectEvent } from '../event/index.ts';
import { alreadyStarted, DuplicateKeyError, ListFailedError, ListTimeoutError } from './errors.ts';
import { Latch } from './latch.ts';
import { Listeners } from './listeners.ts';
import { diffSnapshot, type Known } from './poller-diff.ts';
import { type PollerOptions, type ResolvedPollerOptions, resolvePollerOptions } from './poller-options.ts';

/** Counters of a {@link Poller}. */
export interface PollerStats {
  /** List calls made. */
  readonly polls: number;
  /** Polls that failed (error, timeout, bad result, duplicate key). */
  readonly failures: number;
  /** Failed polls since the last successful one. */
  readonly consecutiveFailures: number;
  /** Items in the last successful result. */
  readonly items: number;
  /** Events emitted (replays to late subscribers not counted). */
  readonly events: number;
  /** How many times a listener threw. */
  readonly listenerErrors: number;
}

/**
 * An {@link EventSource} that polls a `list()` function and diffs each result into events
 * (openclarity's poller, made level-based): items are told apart by `keyOf` and compared by
 * `versionOf`; a new key is a `create`, a changed version an `update(old, new)`, a key that is gone a
 * `delete` (with `finalStateUnknown`, since the poller never sees the final state).
 *
 * Timing: the first poll runs as soon as `start` is called; after a successful poll the next one
 * starts `intervalMs` (jittered) after the **start** of the previous one (fixed rate), or at once if
 * the poll took longer. A list call is aborted and fails after `timeoutMs`. After a failed poll the
 * next one waits `errorBackoffMs`, doubling per further failure up to `maxErrorBackoffMs` (jittered,
 * counted from the failure); one success resets it. All time goes through the injected clock.
 *
 * Failures: a failed poll — the list throws, rejects, times out, returns a non-array, `keyOf` or
 * `versionOf` throws, or two items share a key ({@link DuplicateKeyError}) — emits nothing and keeps
 * the previous state, so an outage never reads as "everything was deleted". It is logged at warn and
 * the poller backs off. `start` never rejects for list errors; it resolves when its signal aborts.
 *
 * Sync: the creates of the first successful poll carry `isInInitialList: true`; once they are
 * delivered the poller is synced (`hasSynced()`, `waitForSync`). A listener that subscribes after
 * that first gets the current items as initial-list creates. Items are frozen before they are
 * handed out. {@link Poller.get} reads the current state.
 *
 * @example
 * const poller = new Poller<Vm>({ list: (signal) => api.listVms({ signal }), keyOf: (vm) => vm.id });
 * const source = fromEventSource(poller, enqueueFromMapFunction((vm: Vm) => [vm.id]));
 */
export class Poller<T> implements EventSource<T> {
  readonly name: string;
  readonly #o: ResolvedPollerOptions<T>;
  readonly #listeners: Listeners<T>;
  readonly #synced = new Latch();
  #state = new Map<string, Known<T>>();
  #started = false;
  #polls = 0;
  #failures = 0;
  #consecutiveFailures = 0;
  #events = 0;
  #listenerErrors = 0;

  constructor(options: PollerOptions<T>) {
    this.#o = resolvePollerOptions(options);
    this.name = this.#o.name;
    this.#listeners = new Listeners<T>((error, event) => {
      this.#listenerErrors++;
      this.#o.logger.error(
        { poller: this.name, eventType: event.type, err: error },
        'Poller listener failed',
      );
    });
  }

  /**
   * Registers a listener. If the poller holds items already, the listener first gets one
   * initial-list create per item, synchronously, before `subscribe` returns.
   */
  subscribe(listener: (event: ObjectEvent<T>) => void): () => void {
    const remove = this.#listeners.add(listener);
    for (const { item } of this.#state.values()) {
      this.#listeners.deliver(listener, { type: 'create', object: item, isInInitialList: true });
    }
    return remove;
  }

  /** Polls until `signal` aborts, then resolves. Rejects only when called a second time. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw alreadyStarted(`poller ${this.name}`);
    this.#started = true;
    const { clock, intervalMs } = this.#o;
    try {
      while (!signal.aborted) {
        const startedAt = clock.now();
        const error = await this.#pollOnce(signal);
        if (signal.aborted) break;
        let delayMs: number;
        if (error === undefined) {
          this.#consecutiveFailures = 0;
          delayMs = startedAt + this.#jittered(intervalMs) - clock.now();
        } else {
          delayMs = this.#jittered(this.#backoffMs());
          this.#failures++;
          this.#consecutiveFailures++;
          this.#o.logger.warn(
            {
              poller: this.name,
              err: error,
              consecutiveFailures: this.#consecutiveFailures,
              retryInMs: delayMs,
            },
            'Poll failed',
          );
        }
        try {
          await clock.sleep(Math.max(0, delayMs), signal);
        } catch {
          break;
        }
      }
    } finally {
      this.#synced.fail(new AbortedError(`poller ${this.name} stopped before its first successful list`));
    }
  }

  /** Resolves once the first successful poll has been delivered; rejects if `signal` aborts or the poller stops first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.#synced.wait(signal);
  }

  hasSynced(): boolean {
    return this.#synced.isOpen;
  }

  /** The current (frozen) item with this key, from the last successful poll. */
  get(key: string): T | undefined {
    return this.#state.get(key)?.item;
  }

  /** The current items, in the order of the last successful poll that changed them. */
  list(): T[] {
    return [...this.#state.values()].map((known) => known.item);
  }

  stats(): PollerStats {
    return {
      polls: this.#polls,
      failures: this.#failures,
      consecutiveFailures: this.#consecutiveFailures,
      items: this.#state.size,
      events: this.#events,
      listenerErrors: this.#listenerErrors,
    };
  }

  /** One poll; resolves with the failure, or undefined on success (or when stopped). Never rejects. */
  async #pollOnce(signal: AbortSignal): Promise<unknown> {
    const { clock, timeoutMs, list, name } = this.#o;
    this.#polls++;
    const call = new AbortController();
    let onStop = (): void => {};
    const stopped = new Promise<never>((_, reject) => {
      onStop = () => {
        call.abort(signal.reason);
        reject(new AbortedError('poll aborted', { cause: signal.reason }));
      };
      signal.addEventListener('abort', onStop, { once: true });
    });
    let timer: { cancel(): void } | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = clock.setTimer(() => {
        const error = new ListTimeoutError(name, timeoutMs);
        call.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      const listed = (async () => list(call.signal))();
      const items = await Promise.race([listed, timedOut, stopped]);
      if (signal.aborted) return undefined;
      this.#apply(items);
      return undefined;
    } catch (error) {
      if (signal.aborted) return undefined;
      const ours =
        error instanceof ListFailedError ||
        error instanceof ListTimeoutError ||
        error instanceof DuplicateKeyError;
      return ours ? error : new ListFailedError(name, 'list threw or rejected', { cause: error });
    } finally {
      timer?.cancel();
      signal.removeEventListener('abort', onStop);
    }
  }

  #apply(items: unknown): void {
    const initial = !this.#synced.isOpen;
    const { state, events } = diffSnapshot(this.#state, items, {
      source: this.name,
      keyOf: this.#o.keyOf,
      versionOf: this.#o.versionOf,
      initial,
      resync: this.#o.resync,
    });
    this.#state = state;
    for (const event of events) {
      this.#events++;
      this.#listeners.emit(event);
    }
    if (initial) this.#synced.open();
  }

  #backoffMs(): number {
    const { errorBackoffMs, maxErrorBackoffMs } = this.#o;
    const delay = errorBackoffMs * 2 ** this.#consecutiveFailures;
    return Number.isFinite(delay) ? Math.min(delay, maxErrorBackoffMs) : maxErrorBackoffMs;
  }

  #jittered(ms: number): number {
    return this.#o.jitterFactor === 0 ? ms : jitter(this.#o.clock, ms, this.#o.jitterFactor);
  }
}
