/**
 * The object cache: one writer, many readers (kube-rs `reflector::store()`, client-go's indexer,
 * controller-runtime's cache reader).
 *
 * - {@link createCache} returns `{ reader, writer }`. Hand the {@link CacheWriter} to the one thing
 *   that keeps the cache in step with its source (an informer) and the {@link CacheReader} to
 *   everyone else: reconcilers, clients, handlers.
 * - Reads (`get`, `list` by namespace / label selector / index, `byIndex`, `keys`) are served from
 *   memory and return the cached objects themselves, **deep-frozen on write, never copied**: share
 *   them freely, copy one before you change it.
 * - Writes: `apply(watchEvent)` for a watch, `stage()` / `replace()` for a (re)list that swaps the
 *   contents at once and reports the creates, updates and deletes it implies, `markSynced()`,
 *   `close()`.
 * - Indexes: the namespace index is built in; `indexField(name, fn)` adds one (controller-runtime
 *   `IndexField`), kept up to date on every write. A deleted object leaves nothing behind.
 *
 * Errors (stable codes in {@link CacheErrorCodes}): {@link CacheClosedError},
 * {@link IndexExistsError}, {@link IndexNotFoundError}, {@link IndexFunctionError} (logged, never
 * thrown), {@link InvalidObjectError}, {@link StageFinishedError}.
 *
 * @example
 * const { reader, writer } = createCache<Pod>({ name: 'pods' });
 * writer.indexField('owner', (pod) => pod.metadata.ownerReferences?.map((ref) => ref.uid) ?? []);
 * writer.replace(list.items, list.resourceVersion);
 * writer.markSynced();
 * reader.list({ namespace: 'default', labelSelector: 'app=web' });
 * reader.byIndex('owner', replicaSetUid);
 *
 * @module
 */
export { type Cache, type CacheOptions, createCache } from './create-cache.ts';
export { deepFreeze } from './deep-freeze.ts';
export {
  CacheClosedError,
  CacheErrorCodes,
  IndexExistsError,
  IndexFunctionError,
  IndexNotFoundError,
  InvalidObjectError,
  KindNotServedError,
  StageFinishedError,
} from './errors.ts';
export type { IndexFunc, IndexStats } from './field-index.ts';
export { type CacheListOptions, type CacheReader, NAMESPACE_INDEX } from './reader.ts';
export type { CacheStage, ReplacedObject, ReplaceResult } from './stage.ts';
export type { StoreStats as CacheStats } from './store.ts';
export type { CacheChange, CacheWriter } from './writer.ts';
