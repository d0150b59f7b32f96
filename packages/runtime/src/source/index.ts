/**
 * Sources: where a controller's requests come from (controller-runtime's `source` package).
 * A {@link Source} is started with the controller's signal and queue and may say when its initial
 * state is queued (`waitForSync`).
 *
 * - {@link fromEventSource}: any {@link EventSource} (informer, {@link Poller},
 *   {@link EventChannel}) through predicates into an event handler; throwing handlers and
 *   predicates are counted and logged, never fatal.
 * - {@link ChannelSource}: push requests from anywhere; buffered until start.
 * - {@link Poller}: an event source that polls a `list()` function at a fixed rate and diffs the
 *   results into create / update / delete events, with timeouts and error backoff on the injected
 *   clock (openclarity's poller).
 * - {@link EventChannel}: an event source you emit events into by hand (tests, bridges).
 * - {@link RemoteWriters}: asked by sources who, in another process, wrote an event's object, so
 *   that its causes name that reconcile (`writtenBy`, `remote`); `@converge/tracing` fills it.
 *
 * Typed errors: {@link ListFailedError}, {@link ListTimeoutError}, {@link DuplicateKeyError} (all
 * handled inside the poller; they reach logs, never `start`).
 *
 * @example
 * const poller = new Poller<Vm>({ list: (signal) => api.listVms({ signal }), keyOf: (vm) => vm.id, intervalMs: 10_000 });
 * const source = fromEventSource(poller, enqueueFromMapFunction((vm: Vm) => [vm.id]));
 * await source.start(signal, queue); // runs until signal aborts
 *
 * @module
 */
export { ChannelSource, type ChannelSourceOptions, type ChannelSourceStats } from './channel-source.ts';
export { DuplicateKeyError, ListFailedError, ListTimeoutError } from './errors.ts';
export { EventChannel, type EventChannelOptions } from './event-channel.ts';
export {
  type EventSourceAdapter,
  type EventSourceStats,
  type FromEventSourceOptions,
  fromEventSource,
} from './from-event-source.ts';
export { Poller, type PollerStats } from './poller.ts';
export type { PollerOptions } from './poller-options.ts';
export { type RemoteWriterLookup, RemoteWriters } from './remote-writers.ts';
export type { Source } from './source.ts';
