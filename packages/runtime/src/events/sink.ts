import { type Backend, isNotFound } from '../backend/index.ts';
import type { Logger } from '../log/index.ts';
import { type CoreEvent, coreEventType, type EventsV1Event, eventsV1Type } from './event-types.ts';
import { microTime, secondsTime } from './format.ts';
import type { SeriesEntry } from './series-cache.ts';

/**
 * Which Events API a recorder writes: `events.k8s.io/v1`, or core `v1` after the fallback.
 *
 * @example
 * if (recorder.stats().api === 'v1') logger.info({}, 'Events written as core/v1');
 */
export type EventsApi = 'events.k8s.io/v1' | 'v1';

/** The state of a series a write carries: read from the entry when the write starts. */
export interface SeriesSnapshot {
  readonly count: number;
  readonly lastObservedAt: number;
}

/** Who reports the events. */
export interface Reporter {
  readonly component: string;
  readonly instance: string;
}

/**
 * Writes an entry's Event to a backend, as an `events.k8s.io/v1` Event or, once that API turned
 * out not to be served, as a core/v1 Event. Errors are the backend's, unchanged.
 */
export class EventSink {
  readonly #backend: Backend;
  readonly #reporter: Reporter;
  readonly #logger: Logger;
  #api: EventsApi = 'events.k8s.io/v1';

  constructor(backend: Backend, reporter: Reporter, logger: Logger) {
    this.#backend = backend;
    this.#reporter = reporter;
    this.#logger = logger;
  }

  /** The API written now. */
  get api(): EventsApi {
    return this.#api;
  }

  /** Creates the entry's Event with the series so far. */
  async create(entry: SeriesEntry, series: SeriesSnapshot, signal: AbortSignal): Promise<void> {
    if (this.#api === 'v1') await this.#backend.create(coreEventType, this.#core(entry, series), { signal });
    else await this.#backend.create(eventsV1Type, this.#eventsV1(entry, series), { signal });
  }

  /** Updates the stored Event's series (events.k8s.io/v1) or count and lastTimestamp (core/v1). */
  async patch(entry: SeriesEntry, series: SeriesSnapshot, signal: AbortSignal): Promise<void> {
    const key = { namespace: entry.data.namespace, name: entry.name };
    if (this.#api === 'v1') {
      const patch = { count: series.count, lastTimestamp: secondsTime(series.lastObservedAt) };
      await this.#backend.patch(coreEventType, key, { type: 'merge', patch }, { signal });
    } else {
      const patch = { series: { count: series.count, lastObservedTime: microTime(series.lastObservedAt) } };
      await this.#backend.patch(eventsV1Type, key, { type: 'merge', patch }, { signal });
    }
  }

  /**
   * After a create answered NotFound: whether that was because `events.k8s.io/v1` is not served
   * (a list of it answers NotFound too, where a missing namespace would list nothing). If so, the
   * sink switches to core/v1 for good and returns true. Errors of the probe are thrown.
   */
  async fallBack(namespace: string, signal: AbortSignal): Promise<boolean> {
    if (this.#api === 'v1') return false;
    try {
      await this.#backend.list(eventsV1Type, { namespace, limit: 1, signal });
      return false;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.#api = 'v1';
    this.#logger.info({ backend: this.#backend.name }, 'events.k8s.io/v1 not served; writing core/v1 Events');
    return true;
  }

  #eventsV1(entry: SeriesEntry, series: SeriesSnapshot): EventsV1Event {
    const { data } = entry;
    return {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: entry.data.namespace },
      eventTime: microTime(entry.firstAt),
      ...(series.count >= 2
        ? { series: { count: series.count, lastObservedTime: microTime(series.lastObservedAt) } }
        : {}),
      reportingController: this.#reporter.component,
      reportingInstance: this.#reporter.instance,
      action: data.action,
      reason: data.reason,
      regarding: data.regarding,
      ...(data.related === undefined ? {} : { related: data.related }),
      note: data.note,
      type: data.type,
    };
  }

  #core(entry: SeriesEntry, series: SeriesSnapshot): CoreEvent {
    const { data } = entry;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: entry.data.namespace },
      involvedObject: data.regarding,
      reason: data.reason,
      message: data.note,
      source: { component: this.#reporter.component },
      firstTimestamp: secondsTime(entry.firstAt),
      lastTimestamp: secondsTime(series.lastObservedAt),
      count: series.count,
      type: data.type,
      action: data.action,
      ...(data.related === undefined ? {} : { related: data.related }),
      reportingComponent: this.#reporter.component,
      reportingInstance: this.#reporter.instance,
    };
  }
}
