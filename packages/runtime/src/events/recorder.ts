import type { KubeObject } from '../object/index.ts';
import type { Runnable } from '../runnable/index.ts';
import type { EventType } from './event-types.ts';
import type { EventsApi } from './sink.ts';

/**
 * Records Kubernetes Events about objects (client-go's `events.EventRecorder`). Recording is
 * fire-and-forget: `event` never throws and never waits for the backend, so a reconciler can
 * call it anywhere. What happens to the event afterwards (written, aggregated into a series,
 * dropped by a rate limit) is the implementation's business.
 *
 * @example
 * recorder.event(website, 'Normal', 'Created', 'CreateDeployment', `created deployment ${name}`);
 * recorder.event(website, 'Warning', 'InvalidSpec', 'Validate', 'spec.replicas must be >= 0');
 */
export interface EventRecorder {
  /**
   * Records that `action` on `regarding` happened for `reason`.
   *
   * @param regarding the object the event is about; it needs `metadata.name`
   * @param type `Normal` or `Warning`
   * @param reason why, in UpperCamelCase (`Created`, `BackOff`); at most 128 characters are kept
   * @param action what was done or failed, in UpperCamelCase (`CreateDeployment`); at most 128 characters are kept
   * @param note human-readable detail; at most 1 KiB (UTF-8) is kept
   * @param related a second object involved (the Deployment a Website created, say)
   */
  event(
    regarding: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void;
}

/**
 * What a recorder did so far; counters only grow, `buffered` and `series` are gauges.
 *
 * @example
 * const { sent, aggregated, dropped } = recorder.stats();
 * metrics.set('events_dropped', dropped.rateLimit + dropped.buffer + dropped.error);
 */
export interface EventRecorderStats {
  /** Events accepted by `event()`: new Events plus repeats. */
  readonly recorded: number;
  /** Of those, repeats folded into an existing Event's series. */
  readonly aggregated: number;
  /** Writes (creates and series updates) that succeeded. */
  readonly sent: number;
  /** Failed tries of a write that were tried again. */
  readonly retries: number;
  readonly dropped: {
    /** New Events over their object's rate limit. */
    readonly rateLimit: number;
    /** New Events that found the buffer full. */
    readonly buffer: number;
    /**
     * Series updates lost: a series left the memory (past `maxSeries`, or its window ended) while
     * its last occurrences waited for the heartbeat, and the buffer had no room for them.
     */
    readonly evicted: number;
    /** Writes given up after errors (each logged with `CONVERGE_ERR_EVENTS_WRITE_FAILED`). */
    readonly error: number;
    /** Events no API server would accept (each logged with `CONVERGE_ERR_EVENTS_INVALID`). */
    readonly invalid: number;
    /** Events recorded after `close()`, and writes `close()` abandoned at its timeout. */
    readonly closed: number;
  };
  /** Writes waiting in the buffer now (at most `maxBuffer`). */
  readonly buffered: number;
  /** Series remembered now (at most `maxSeries`). */
  readonly series: number;
  /** The API written: `events.k8s.io/v1`, or `v1` after the fallback. */
  readonly api: EventsApi;
}

/**
 * How `close()` ended.
 *
 * @example
 * const { flushed, abandoned } = await recorder.close({ timeoutMs: 5000 });
 */
export interface EventsCloseResult {
  /** Whether everything pending was written (or given up) within the timeout. */
  readonly flushed: boolean;
  /** Writes abandoned at the timeout. */
  readonly abandoned: number;
}

/**
 * An {@link EventRecorder} writing to a Backend, with stats and a bounded close. It is also a
 * {@link Runnable} (`manager.add(recorder)`): `start(signal)` closes it when the signal aborts.
 * It writes from the first event on; `start` is not needed to record.
 *
 * @example
 * const recorder: BackendEventRecorder = createEventRecorder({ backend, component: 'website-controller' });
 * manager.add(recorder);
 * recorder.event(website, 'Normal', 'Ready', 'Reconcile', 'all children ready');
 */
export interface BackendEventRecorder extends EventRecorder, Runnable {
  readonly needLeaderElection: false;
  stats(): EventRecorderStats;
  /**
   * Stops recording (later events count as `dropped.closed`), writes what waits for its
   * heartbeat, and waits for the writer up to `timeoutMs` (default the `closeTimeoutMs` option; 0
   * does not wait). Never rejects. Calling it again returns the same promise.
   */
  close(options?: { readonly timeoutMs?: number }): Promise<EventsCloseResult>;
}
