import type { EventSource, ObjectEvent } from '../event/index.ts';
import type { Logger } from '../log/index.ts';
import { func } from '../options.ts';
import { Latch } from './latch.ts';
import { Listeners } from './listeners.ts';
import { booleanOption, loggerOption } from './option-checks.ts';

export interface EventChannelOptions<T> {
  /**
   * Whether the channel counts as synced from the start. Default true. Pass false to bridge a
   * source with an initial state: emit it, then call {@link EventChannel.markSynced}.
   */
  readonly synced?: boolean;
  /** Called with what a listener throws (after it is logged). The other listeners still get the event. */
  readonly onListenerError?: (error: unknown, event: ObjectEvent<T>) => void;
  /** Where listener failures are logged. Default no logging. */
  readonly logger?: Logger;
}

/**
 * An {@link EventSource} you emit object events into by hand: for tests, and for bridging anything
 * that produces events (a message bus, a webhook) into `fromEventSource`. Events go synchronously to
 * the listeners subscribed at that moment, in subscription order; an event emitted while nobody
 * listens is gone (the channel keeps no state). A throwing listener is logged, reported to
 * `onListenerError` and counted; `emit` itself never throws.
 *
 * @example
 * const events = new EventChannel<Widget>({ synced: false });
 * const source = fromEventSource(events, enqueueForObject());
 * // …after the controller started the source:
 * events.create(widget, { isInInitialList: true });
 * events.markSynced();
 * events.update(widget, { ...widget, spec: { size: 2 } });
 */
export class EventChannel<T> implements EventSource<T> {
  readonly #listeners: Listeners<T>;
  readonly #synced = new Latch();
  #listenerErrors = 0;

  constructor(options: EventChannelOptions<T> = {}) {
    const logger = loggerOption('logger', options.logger);
    const onListenerError = func('onListenerError', options.onListenerError, undefined);
    if (booleanOption('synced', options.synced, true)) this.#synced.open();
    this.#listeners = new Listeners<T>((error, event) => {
      this.#listenerErrors++;
      logger.error({ err: error, eventType: event.type }, 'Event listener failed');
      try {
        onListenerError?.(error, event);
      } catch (hookError) {
        logger.error({ err: hookError }, 'onListenerError failed');
      }
    });
  }

  /** Number of current listeners. */
  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** How many times a listener threw. */
  get listenerErrors(): number {
    return this.#listenerErrors;
  }

  subscribe(listener: (event: ObjectEvent<T>) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** Delivers `event` to every current listener. */
  emit(event: ObjectEvent<T>): void {
    this.#listeners.emit(event);
  }

  /** Emits a create event. */
  create(object: T, options: { readonly isInInitialList?: boolean } = {}): void {
    this.emit(
      options.isInInitialList === true
        ? { type: 'create', object, isInInitialList: true }
        : { type: 'create', object },
    );
  }

  /** Emits an update event from `oldObject` to `object`. */
  update(oldObject: T, object: T, options: { readonly isResync?: boolean } = {}): void {
    this.emit(
      options.isResync === true
        ? { type: 'update', oldObject, object, isResync: true }
        : { type: 'update', oldObject, object },
    );
  }

  /** Emits a delete event; `finalStateUnknown` marks `object` as a tombstone. */
  delete(object: T, options: { readonly finalStateUnknown?: boolean } = {}): void {
    this.emit(
      options.finalStateUnknown === true
        ? { type: 'delete', object, finalStateUnknown: true }
        : { type: 'delete', object },
    );
  }

  /** Emits a generic event. */
  generic(object: T): void {
    this.emit({ type: 'generic', object });
  }

  /** Marks the initial state as delivered: `waitForSync` resolves and `hasSynced()` is true. Idempotent. */
  markSynced(): void {
    this.#synced.open();
  }

  hasSynced(): boolean {
    return this.#synced.isOpen;
  }

  /** Resolves once synced; rejects with an AbortedError if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.#synced.wait(signal);
  }
}
