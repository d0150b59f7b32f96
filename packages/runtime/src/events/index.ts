/**
 * Kubernetes Events, over any Backend (the in-process store, a Kubernetes API server, NATS KV):
 * what happened to an object, for `kubectl describe` and `kubectl events`.
 *
 * - {@link EventRecorder} — `event(regarding, type, reason, action, note, related?)`; never
 *   throws, never waits.
 * - {@link createEventRecorder} — the recorder of client-go's `tools/events`:
 *   - writes `events.k8s.io/v1` Events ({@link eventsV1Type}) named `<name>.<unique suffix>` in
 *     the regarding object's namespace (`default` for cluster-scoped objects); when the backend
 *     does not serve that API (a create and a list of it answer NotFound) it switches, once, to
 *     core/v1 Events ({@link coreEventType});
 *   - aggregates: repeats with the same regarding and related object, type, reason, action and
 *     note within `seriesWindowMs` (6 min) of the previous one update one Event's `series` (core/v1:
 *     `count` and `lastTimestamp`), written at most every `heartbeatMs` (30 s);
 *   - rate-limits new Events per regarding object with client-go's spam filter (burst 25, one token
 *     per 5 minutes); over the limit they are dropped and counted, never delayed;
 *   - writes one at a time from a bounded buffer (`maxBuffer`, 1000; full: the newest event is
 *     dropped), retrying retryable errors with backoff on the clock, then dropping and logging;
 *   - keeps bounded memory: at most `maxSeries` series and rate-limited objects, `maxBuffer`
 *     pending writes;
 *   - `stats()`, and `close()` that flushes within a bound; `start(signal)` for the Manager.
 * - {@link FakeRecorder} — keeps events in memory for reconciler tests.
 * - {@link EventReasons} and {@link eventMessages} — Kumori's reasons (`Synced`,
 *   `ErrResourceExists`) and message formats (`"name" synced successfully (created)`).
 *
 * Errors, logged and counted, never thrown at the caller: {@link EventInvalidError}
 * (`CONVERGE_ERR_EVENTS_INVALID`), {@link EventWriteError} (`CONVERGE_ERR_EVENTS_WRITE_FAILED`),
 * {@link EventsCloseTimeoutError} (`CONVERGE_ERR_EVENTS_CLOSE_TIMEOUT`).
 *
 * @example
 * import { createEventRecorder } from '@converge/runtime';
 *
 * const recorder = createEventRecorder({ backend, component: 'website-controller', logger });
 * manager.add(recorder);
 * // in the reconciler:
 * recorder.event(website, 'Normal', 'Created', 'CreateDeployment', `created deployment ${name}`, deployment);
 *
 * @module
 */
export { createEventRecorder } from './backend-recorder.ts';
export {
  EventInvalidError,
  EventsCloseTimeoutError,
  EventsErrorCodes,
  EventWriteError,
} from './errors.ts';
export {
  type CoreEvent,
  type CoreEventSource,
  coreEventType,
  type EventSeries,
  type EventsV1Event,
  type EventType,
  eventsV1Type,
  type ObjectReference,
} from './event-types.ts';
export { FakeRecorder, type FakeRecorderOptions, type RecordedEvent } from './fake-recorder.ts';
export { objectReference } from './format.ts';
export type { EventRecorderOptions } from './options.ts';
export { EventReasons, eventMessages, type SyncedOperation } from './reasons.ts';
export type {
  BackendEventRecorder,
  EventRecorder,
  EventRecorderStats,
  EventsCloseResult,
} from './recorder.ts';
export type { EventsApi } from './sink.ts';
