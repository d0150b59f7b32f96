import type { WatchEvent } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { checkObject } from './check-object.ts';
import type { CacheCore } from './core.ts';
import { deepFreeze } from './deep-freeze.ts';
import { CacheClosedError, IndexExistsError } from './errors.ts';
import type { IndexFunc } from './field-index.ts';
import { NAMESPACE_INDEX } from './reader.ts';
import { type CacheStage, CoreStage, type ReplaceResult } from './stage.ts';

/**
 * What one {@link CacheWriter.apply} did, so the informer can tell listeners:
 * - `created`: the key was not cached;
 * - `updated`: the key was cached (an ADDED for a known key is an update too);
 * - `deleted`: the key was cached and is gone; `object` is the state the event carried, `cached`
 *   the state the cache held;
 * - `unchanged`: a bookmark, or a DELETED for a key the cache does not hold.
 */
export type CacheChange<T> =
  | { readonly type: 'created'; readonly object: T }
  | { readonly type: 'updated'; readonly oldObject: T; readonly object: T }
  | { readonly type: 'deleted'; readonly object: T; readonly cached: T }
  | { readonly type: 'unchanged' };

/**
 * The write side of a cache: exactly one per cache (kube-rs `reflector::store::Writer`), owned by
 * whatever keeps the cache in step with its source (an informer). Every object written is
 * deep-frozen once, here, and then shared with every reader.
 *
 * @example
 * const { reader, writer } = createCache<Pod>();
 * writer.replace(list.items, list.resourceVersion); // the initial list
 * writer.markSynced();
 * writer.apply({ type: 'MODIFIED', object: pod }); // { type: 'updated', oldObject, object }
 * writer.close(); // readers keep the last contents; waiters for sync are released
 */
export interface CacheWriter<T extends KubeObject = KubeObject> {
  /** True after {@link CacheWriter.close}. */
  readonly closed: boolean;
  /**
   * Applies one watch event: ADDED and MODIFIED upsert, DELETED removes (a DELETED for an unknown
   * key changes nothing), BOOKMARK only moves `resourceVersion`. Throws an `InvalidObjectError`
   * for an object without `metadata.name`, a `CacheClosedError` after `close`.
   */
  apply(event: WatchEvent<T>): CacheChange<T>;
  /** Starts a replace to fill page by page; see {@link CacheStage}. */
  stage(): CacheStage<T>;
  /** Replaces the whole contents at once (a relist) and reports the creates, updates and deletes it implies. */
  replace(objects: Iterable<T>, resourceVersion: string): ReplaceResult<T>;
  /** Marks the cache synced: `hasSynced()` turns true and `waitForSync` waiters resolve. */
  markSynced(): void;
  /**
   * Registers a custom index (controller-runtime `IndexField`), kept up to date on every write;
   * objects already cached are indexed at once. Names are unique and `namespace` is built in
   * ({@link IndexExistsError}). The function gets the frozen object and must be pure.
   */
  indexField(name: string, fn: IndexFunc<T>): void;
  /**
   * Closes the writer: later writes throw, and if the cache never synced its `waitForSync` waiters
   * reject with a `CacheClosedError`. Readers keep reading the last contents. Idempotent.
   */
  close(): void;
}

/** A {@link CacheWriter} over a {@link CacheCore}. */
export class CoreWriter<T extends KubeObject> implements CacheWriter<T> {
  readonly #core: CacheCore<T>;

  constructor(core: CacheCore<T>) {
    this.#core = core;
  }

  get closed(): boolean {
    return this.#core.closed;
  }

  apply(event: WatchEvent<T>): CacheChange<T> {
    const core = this.#core;
    core.assertOpen('apply an event');
    if (event.type === 'BOOKMARK') {
      core.resourceVersion = event.resourceVersion;
      return { type: 'unchanged' };
    }
    const object = event.object;
    const { namespace, name } = checkObject(core.name, object);
    core.writes++;
    const version = object.metadata.resourceVersion;
    if (version !== undefined && version !== '') core.resourceVersion = version;
    if (event.type === 'DELETED') {
      const cached = core.store.remove(namespace, name);
      return cached === undefined
        ? { type: 'unchanged' }
        : { type: 'deleted', object: deepFreeze(object), cached };
    }
    const oldObject = core.store.putAt(namespace, name, deepFreeze(object));
    return oldObject === undefined ? { type: 'created', object } : { type: 'updated', oldObject, object };
  }

  stage(): CacheStage<T> {
    this.#core.assertOpen('stage a replace');
    return new CoreStage(this.#core);
  }

  replace(objects: Iterable<T>, resourceVersion: string): ReplaceResult<T> {
    const stage = this.stage();
    for (const object of objects) stage.add(object);
    return stage.commit(resourceVersion);
  }

  markSynced(): void {
    this.#core.assertOpen('mark the cache synced');
    this.#core.gate.open();
  }

  indexField(name: string, fn: IndexFunc<T>): void {
    const core = this.#core;
    core.assertOpen('add an index');
    if (typeof name !== 'string' || name === '')
      throw new OptionsError('name', name, 'a non-empty index name');
    if (typeof fn !== 'function') throw new OptionsError('fn', fn, 'an index function (object) => string[]');
    if (name === NAMESPACE_INDEX || core.indexes.has(name)) throw new IndexExistsError(core.name, name);
    core.indexes.set(name, fn);
    core.store.addIndex(name, fn);
  }

  close(): void {
    const core = this.#core;
    if (core.closed) return;
    core.closed = true;
    core.gate.fail(new CacheClosedError(core.name, 'closed before the cache synced'));
  }
}
