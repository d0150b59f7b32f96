/**
 * Informers: keep a cache in step with a backend by list-then-watch, and tell listeners what
 * changed (client-go's Reflector + SharedIndexInformer, kube-rs' `watcher` + `reflector`).
 *
 * - {@link Informer} — one kind (optionally one namespace and selectors) from one backend: a streamed
 *   list (`sendInitialEvents`, falling back to a paginated list where the backend rejects it), watch
 *   with bookmarks resumed from the last resourceVersion, relist on expiry (410),
 *   jittered exponential backoff on every other error, never stops and never throws into your code.
 *   It is an `EventSource` (create / update / delete with tombstones, resync, late-subscriber
 *   replay) and exposes its `cache` (a `CacheReader` of frozen objects).
 * - {@link InformerRegistry} — one shared, reference-counted informer per backend, kind, namespace,
 *   selectors and metadata-only mode; started with the manager, released with the last user.
 * - `metadataOnly` ({@link InformerOptions.metadataOnly}) — lists, watches and caches only
 *   `{ apiVersion, kind, metadata }` of each object (controller-runtime's `OnlyMetadata`).
 * - {@link stripManagedFields} — the default transform.
 *
 * Errors (stable codes in {@link InformerErrorCodes}) are logged, never thrown from `start`:
 * {@link MalformedEventError}, {@link TransformFailedError}, {@link ShortWatchError},
 * {@link ResourceVersionRegressionError}, {@link WatchExpiredAtStartError},
 * {@link WatchListUnsupportedError}, {@link InitialEventsIncompleteError}; `acquire` on a stopped
 * registry throws {@link RegistryStoppedError}.
 *
 * A scripted fake backend with fault injection for tests is in `./testing/index.ts`.
 *
 * @example
 * const informers = new InformerRegistry({ logger });
 * const { informer } = informers.acquire<Widget>({ backend, type: widgetType, labelSelector: 'tier=prod' });
 * const source = fromEventSource({ eventSource: informer, handler: enqueueForObject(), startEventSource: false });
 * void informers.start(signal);
 * await informers.waitForSync(signal);
 *
 * @module
 */
export {
  InformerErrorCodes,
  InitialEventsIncompleteError,
  MalformedEventError,
  RegistryStoppedError,
  ResourceVersionRegressionError,
  ShortWatchError,
  TransformFailedError,
  WatchExpiredAtStartError,
  WatchListUnsupportedError,
} from './errors.ts';
export { Informer, type WaitForSyncOptions } from './informer.ts';
export type {
  BackoffOptions,
  InformerErrorInfo,
  InformerOptions,
  InformerShardScope,
  InitialListMode,
} from './options.ts';
export type { InformerState, ListFrom, ListMethod } from './reflector.ts';
export {
  type InformerHandle,
  InformerRegistry,
  type InformerRegistryOptions,
  type InformerSpec,
} from './registry.ts';
export type {
  InformerMetrics,
  InformerStats,
  ListDetail,
  ListReason,
  WatchEndReason,
} from './stats.ts';
export { stripManagedFields } from './transform.ts';
