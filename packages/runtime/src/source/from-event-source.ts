import { OptionsError } from '../errors.ts';
import type { EventSource, ObjectEvent } from '../event/index.ts';
import {
  EVENT_CAUSE,
  type EventCauseProvider,
  type EventHandler,
  eventCause,
  eventCauseFor,
  type RequestQueue,
} from '../handler/index.ts';
import type { Logger } from '../log/index.ts';
import { func, nonEmptyString } from '../options.ts';
import type { Predicate } from '../predicate/index.ts';
import { whenAborted } from '../runnable/index.ts';
import type { AddAfterOptions, AddOptions, Cause, CauseWriter } from '../workqueue/index.ts';
import { alreadyStarted } from './errors.ts';
import { Latch } from './latch.ts';
import { booleanOption, loggerOption } from './option-checks.ts';
import { RemoteWriters } from './remote-writers.ts';
import type { Source } from './source.ts';

export interface FromEventSourceOptions<T, R> {
  readonly eventSource: EventSource<T>;
  readonly handler: EventHandler<T, R>;
  /** Every one must pass for an event to reach the handler. Default none. */
  readonly predicates?: readonly Predicate<T>[];
  /** Name for logs and for the `source` of causes. Default the event source's `name`, else 'events'. */
  readonly name?: string;
  /**
   * Run `eventSource.start(signal)` from this source's `start`. Default true. Pass false when the
   * event source is shared and started elsewhere (an informer run by a cache).
   */
  readonly startEventSource?: boolean;
  /** Called with what a predicate or the handler threw, after it is logged and counted. */
  readonly onError?: (error: unknown, event: ObjectEvent<T>) => void;
  /** Where failures are logged. Default no logging. */
  readonly logger?: Logger;
  /**
   * Asked who, in another process, wrote the object of each `added` or `modified` event: its
   * causes then name that reconcile (`writtenBy`, `remote`). Default none (a manager's builder
   * passes `manager.remoteWriters`).
   */
  readonly remoteWriters?: RemoteWriters;
}

/** Counters of an {@link EventSourceAdapter}. */
export interface EventSourceStats {
  /** Events received while running. */
  readonly events: number;
  /** Events a predicate filtered. */
  readonly filtered: number;
  /** Events the handler handled without throwing. */
  readonly handled: number;
  /** Events a predicate or the handler threw on. */
  readonly errors: number;
}

/** The {@link Source} {@link fromEventSource} returns. */
export interface EventSourceAdapter<R> extends Source<R> {
  readonly name: string;
  /** Resolves once started and the event source has synced; rejects with an AbortedError if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<void>;
  stats(): EventSourceStats;
}

/**
 * Adapts an {@link EventSource} (informer, poller, event channel) into a controller {@link Source}
 * (controller-runtime's `source.Kind` / `source.Informer`): on `start` it subscribes — before
 * starting the event source, so events delivered during the initial sync reach the queue — passes
 * each event through the predicates to the handler, and runs `eventSource.start(signal)` if there is
 * one. When the signal aborts it unsubscribes and resolves; a rejection of `eventSource.start`
 * before that is a failure of this source. `waitForSync` waits until started, then delegates to
 * `eventSource.waitForSync`.
 *
 * A predicate or handler that throws never breaks the source: the event is dropped, counted in
 * `stats().errors`, logged, and passed to `onError`.
 *
 * Causes: every add the handler makes carries a cause with this source's name as `source`. An
 * add without a cause gets the event's ({@link eventCauseFor}: `secondary` when the request is not
 * the event's own object), so handlers that know nothing of causes still say why.
 *
 * Call it with positional arguments, or with one options object for names, error hooks and shared
 * event sources.
 *
 * @example
 * const source = fromEventSource(poller, enqueueForObject(), generationChanged());
 * const shared = fromEventSource({ eventSource: informer, handler, startEventSource: false, logger });
 */
export function fromEventSource<T, R>(
  eventSource: EventSource<T>,
  handler: EventHandler<T, R>,
  ...predicates: Predicate<T>[]
): EventSourceAdapter<R>;
export function fromEventSource<T, R>(options: FromEventSourceOptions<T, R>): EventSourceAdapter<R>;
export function fromEventSource<T, R>(
  first: EventSource<T> | FromEventSourceOptions<T, R>,
  handler?: EventHandler<T, R>,
  ...predicates: Predicate<T>[]
): EventSourceAdapter<R> {
  if (handler === undefined && typeof first === 'object' && first !== null && 'eventSource' in first) {
    return new Adapter(first);
  }
  return new Adapter({
    eventSource: first as EventSource<T>,
    handler: handler as EventHandler<T, R>,
    predicates,
  });
}

class Adapter<T, R> implements EventSourceAdapter<R> {
  readonly name: string;
  readonly #eventSource: EventSource<T>;
  readonly #handler: EventHandler<T, R>;
  readonly #predicates: readonly Predicate<T>[];
  readonly #startEventSource: boolean;
  readonly #onError: ((error: unknown, event: ObjectEvent<T>) => void) | undefined;
  readonly #logger: Logger;
  readonly #remoteWriters: RemoteWriters | undefined;
  readonly #started = new Latch();
  #running = false;
  #events = 0;
  #filtered = 0;
  #handled = 0;
  #errors = 0;

  constructor(options: FromEventSourceOptions<T, R>) {
    const { eventSource, handler, predicates = [] } = options;
    if (
      typeof eventSource !== 'object' ||
      eventSource === null ||
      typeof eventSource.subscribe !== 'function'
    ) {
      throw new OptionsError('eventSource', eventSource, 'an EventSource with a subscribe() method');
    }
    if (typeof handler !== 'object' || handler === null || typeof handler.handle !== 'function') {
      throw new OptionsError('handler', handler, 'an event handler with a handle() method');
    }
    if (!Array.isArray(predicates))
      throw new OptionsError('predicates', predicates, 'an array of predicates');
    predicates.forEach((p: unknown, i) => {
      if (typeof p !== 'function') throw new OptionsError(`predicates[${i}]`, p, 'a predicate function');
    });
    const named = (eventSource as { name?: unknown }).name;
    this.name = nonEmptyString(
      'name',
      options.name,
      typeof named === 'string' && named !== '' ? named : 'events',
    );
    this.#eventSource = eventSource;
    this.#handler = handler;
    this.#predicates = [...predicates];
    this.#startEventSource = booleanOption('startEventSource', options.startEventSource, true);
    this.#onError = func('onError', options.onError, undefined);
    this.#logger = loggerOption('logger', options.logger);
    const remote = options.remoteWriters;
    if (remote !== undefined && !(remote instanceof RemoteWriters))
      throw new OptionsError('remoteWriters', remote, 'a RemoteWriters');
    this.#remoteWriters = remote;
  }

  async start(signal: AbortSignal, queue: RequestQueue<R>): Promise<void> {
    if (this.#running) throw alreadyStarted(`source ${this.name}`);
    this.#running = true;
    if (signal.aborted) {
      this.#started.open();
      return;
    }
    const unsubscribe = this.#eventSource.subscribe((event) => {
      if (!signal.aborted) this.#dispatch(event, queue);
    });
    this.#started.open();
    const stopped = whenAborted(signal);
    try {
      if (this.#startEventSource && this.#eventSource.start !== undefined) {
        try {
          await this.#eventSource.start(signal);
        } catch (error) {
          if (!signal.aborted) throw error;
        }
      }
      await stopped;
    } finally {
      unsubscribe();
    }
  }

  async waitForSync(signal: AbortSignal): Promise<void> {
    await this.#started.wait(signal);
    await this.#eventSource.waitForSync?.(signal);
  }

  stats(): EventSourceStats {
    return { events: this.#events, filtered: this.#filtered, handled: this.#handled, errors: this.#errors };
  }

  #dispatch(event: ObjectEvent<T>, queue: RequestQueue<R>): void {
    this.#events++;
    let stage = 'predicate';
    try {
      for (const predicate of this.#predicates) {
        if (!predicate(event)) {
          this.#filtered++;
          return;
        }
      }
      stage = 'handler';
      const writer = this.#remoteWriters?.echoWriterOf(event);
      this.#handler.handle(event, new CausingQueue(queue, event, this.name, writer));
      this.#handled++;
    } catch (error) {
      this.#errors++;
      this.#logger.error(
        { source: this.name, eventType: event.type, err: error },
        stage === 'handler' ? 'Event handler failed' : 'Event predicate failed',
      );
      try {
        this.#onError?.(error, event);
      } catch (hookError) {
        this.#logger.error({ source: this.name, err: hookError }, 'onError failed');
      }
    }
  }
}

/**
 * The queue a handler sees for one event: adds without a cause get the event's, and causes without
 * a source get the source's name (once per distinct cause, so adds of one event share it). With a
 * remote writer, the causes about the event's object that name no writer get it.
 */
class CausingQueue<T, R> implements RequestQueue<R>, EventCauseProvider {
  readonly #queue: RequestQueue<R>;
  readonly #event: ObjectEvent<T>;
  readonly #source: string;
  readonly #writer: CauseWriter | undefined;
  #own: Cause | undefined;
  #secondary: Cause | undefined;
  #given: Cause | undefined;
  #stamped: Cause | undefined;

  constructor(
    queue: RequestQueue<R>,
    event: ObjectEvent<T>,
    source: string,
    writer: CauseWriter | undefined,
  ) {
    this.#queue = queue;
    this.#event = event;
    this.#source = source;
    this.#writer = writer;
  }

  add(request: R, options?: AddOptions): void {
    this.#queue.add(request, this.#withCause(request, options));
  }

  addAfter(request: R, delayMs: number, options?: AddAfterOptions): void {
    this.#queue.addAfter(request, delayMs, this.#withCause(request, options));
  }

  #withCause<O extends AddOptions>(request: R, options: O | undefined): O {
    const given = options?.cause;
    if (given !== undefined && given.source !== undefined) return options as O;
    return { ...options, cause: given === undefined ? this.#default(request) : this.#stamp(given) } as O;
  }

  /** The event's cause as {@link CausingQueue.add} would fill it in, for handlers to pass as is. */
  [EVENT_CAUSE](secondary: boolean): Cause {
    if (secondary) {
      this.#secondary ??= this.#attribute(eventCause(this.#event, { source: this.#source, secondary }));
      return this.#secondary;
    }
    this.#own ??= this.#attribute(eventCause(this.#event, { source: this.#source }));
    return this.#own;
  }

  #default(request: R): Cause {
    // Computed at most twice per event: for its own object, and for any other.
    const cause = this.#attribute(eventCauseFor(this.#event, request, { source: this.#source }));
    if (cause.secondary === true) {
      this.#secondary ??= cause;
      return this.#secondary;
    }
    this.#own ??= cause;
    return this.#own;
  }

  #stamp(cause: Cause): Cause {
    if (cause !== this.#given) {
      this.#given = cause;
      this.#stamped = this.#attribute(Object.freeze({ ...cause, source: this.#source }));
    }
    return this.#stamped as Cause;
  }

  /** `cause` with the remote writer, when there is one and the cause is about this event's version. */
  #attribute(cause: Cause): Cause {
    const writer = this.#writer;
    if (writer === undefined || cause.writtenBy !== undefined) return cause;
    if (cause.type !== 'added' && cause.type !== 'modified') return cause;
    const rv = cause.object?.resourceVersion;
    const metadata = (this.#event.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
    if (rv === undefined || rv !== metadata?.resourceVersion) return cause;
    return Object.freeze({ ...cause, writtenBy: writer });
  }
}
