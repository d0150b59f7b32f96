/**
 * `@converge/store`: an etcd-like versioned object store and its in-process {@link Backend}.
 *
 * - {@link Store} — implements the Backend contract with Kubernetes semantics: a global revision
 *   counter (resourceVersion), MVCC history for consistent `limit` / `continue` pages and watches
 *   resumable from a resourceVersion (410 `ExpiredError` past the history window), label and field
 *   selectors, generation and the status subresource, optimistic concurrency, finalizers, propagation
 *   policies with an in-store owner-reference garbage collector, namespace lifecycle, merge and JSON
 *   patch, dryRun, runtime type registration, and optional persistence (`dataDir`: checksummed
 *   append-only log plus snapshots, fsynced before a write resolves).
 * - {@link StoreOptions} — defaults: watch history kept 5 min, at most 100 000 events and at most
 *   64 MiB of old versions (`maxHistoryBytes`, {@link DEFAULT_MAX_HISTORY_BYTES}), whichever bound is
 *   reached first; bookmarks every 60 s; watchers ended (410, relist) past 10 000 unread events or
 *   64 MiB of them (`maxWatcherBufferBytes`). Bytes are the approximate JSON size of each version,
 *   computed once when it is written; only versions that were superseded or deleted count (current
 *   objects are live data, not history), the oldest are dropped first, and a watch, list or continue
 *   token from before what is retained gets 410 Expired. {@link Store.history} reports what is held.
 * - Persistence (`dataDir`): one writer per directory (a `LOCK` file naming the process that has
 *   it open; a second open, here or in another process, is a {@link StoreLockedError}; a dead
 *   process's lock on this host is taken over), compaction by log size, `health()` for readiness,
 *   a damage policy ({@link StoreCorruptError}, {@link StoreDataMissingError}) and
 *   {@link checkDataDir} / {@link repairDataDir} behind `converge store check|repair`.
 * - Errors: the runtime's backend errors, plus {@link StoreCorruptError} (`CONVERGE_ERR_STORE_CORRUPT`),
 *   {@link StoreDataMissingError} (`CONVERGE_ERR_STORE_DATA_MISSING`),
 *   {@link StoreLockedError} (`CONVERGE_ERR_STORE_LOCKED`),
 *   {@link TypeConflictError} (`CONVERGE_ERR_STORE_TYPE_CONFLICT`) and {@link StorePersistError}
 *   (`CONVERGE_ERR_STORE_PERSIST_FAILED`, the cause of an InternalError).
 *
 * - Object strategies, for other backends that keep Kubernetes semantics outside this store (the NATS
 *   KV backend): {@link toDraft}, {@link prepareCreate}, {@link prepareUpdate},
 *   {@link prepareStatusUpdate}, {@link validateMeta}, {@link checkShape}, {@link generateName} and
 *   the JSON helpers they need. They are pure: no store, no I/O.
 *
 * Returned objects are deep-frozen and shared: never mutate them.
 *
 * @example
 * import { Store } from '@converge/store';
 *
 * const store = new Store({ dataDir: './data' });
 * const widgets = store.registerType({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true, statusSubresource: true });
 * await store.create(widgets, { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
 * const page = await store.list(widgets, { limit: 500 });
 *
 * @module
 */
export { generateName } from './create.ts';
export { type Draft, toDraft } from './draft.ts';
export {
  StoreCorruptError,
  StoreDataMissingError,
  StoreErrorCodes,
  StoreLockedError,
  type StoreLockedReason,
  type StoreLockHolder,
  StorePersistError,
  TypeConflictError,
} from './errors.ts';
export type { HistoryStats } from './event-log.ts';
export { cloneJson, type JsonObject, jsonEqual, rfc3339, withMutableMeta } from './json.ts';
export {
  checkDataDir,
  type DataDirLockState,
  type DataDirReport,
  nodeFileSystem,
  type PersistenceStatus,
  type RepairReport,
  repairDataDir,
  type StoreFileSystem,
  type StorePersistenceOptions,
} from './persistence/index.ts';
export { prepareCreate, prepareStatusUpdate, prepareUpdate, tracksGeneration } from './prepare.ts';
export { Store, type StoreHealth } from './store.ts';
export {
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_WATCHER_BUFFER_BYTES,
  type StoreOptions,
} from './store-options.ts';
export { checkShape, validateMeta } from './validate.ts';
