import {
  AbortedError,
  type Backend,
  BadRequestError,
  checkFence,
  type DeleteOptions,
  type DeleteResult,
  type Fence,
  FenceTable,
  type GetOptions,
  type KubeObject,
  type ListOptions,
  metadataOnlyEvents,
  metadataOnlyList,
  metadataProjection,
  type ObjectKey,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type ResourceType,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@converge/runtime';
import { type ServedType, StoreCore } from './core.ts';
import { createObject } from './create.ts';
import { deleteObject } from './delete.ts';
import { toDraft } from './draft.ts';
import { notFound } from './errors.ts';
import type { HistoryStats } from './event-log.ts';
import { GarbageCollector } from './gc.ts';
import { encodeKey } from './keys.ts';
import { listObjects } from './list.ts';
import { patchObject } from './patch.ts';
import type { PersistenceStatus } from './persistence/index.ts';
import { resolveStoreOptions, type StoreOptions } from './store-options.ts';
import { updateObject } from './update.ts';
import { Watcher } from './watcher.ts';

/** What {@link Store.health} reports. */
export interface StoreHealth {
  /** Open, and (with a data directory) writable with no failed snapshot pending. */
  readonly ok: boolean;
  readonly persistence: PersistenceStatus | undefined;
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new AbortedError('operation aborted', { cause: signal.reason });
}

/**
 * Checks a write's fence against the store's marks (raising the mark unless it is a dry run). It
 * runs in the same synchronous step as the write it guards: nothing can interleave before the commit.
 */
function checkWriteFence(
  fences: FenceTable,
  options: { readonly fence?: Fence; readonly dryRun?: boolean },
): void {
  if (options.fence === undefined) return;
  checkFence(options.fence);
  fences.check(options.fence, options.dryRun !== true);
}

/** Validates a key and returns its internal form (a namespace on a cluster-scoped key never matches). */
function keyOf(td: ServedType, key: ObjectKey): string {
  if (
    typeof key !== 'object' ||
    key === null ||
    typeof key.name !== 'string' ||
    typeof key.namespace !== 'string'
  ) {
    throw new BadRequestError('an object key needs a string namespace and name');
  }
  if (key.name === '') throw new BadRequestError('resource name may not be empty');
  if (!td.type.namespaced && key.namespace !== '') throw notFound(td.type, key.name);
  return encodeKey(key.namespace, key.name);
}

/**
 * An etcd-like versioned object store implementing the {@link Backend} contract in process, with
 * Kubernetes semantics: one global revision counter, MVCC history for consistent pagination and
 * resumable watches, generation / status / finalizer rules, an owner-reference garbage collector and
 * namespace lifecycle, and optional persistence to a data directory.
 *
 * Returned objects are **deep-frozen and shared** (no copy per call): read them freely, never
 * mutate them (copy first, e.g. with `structuredClone`). Objects passed in are copied, never kept.
 *
 * Every write is synchronous inside the store (so concurrent calls are serialised in call order)
 * and its promise resolves once it is durable (with `dataDir`).
 *
 * @example
 * const store = new Store({ types: [{ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, generation: false }] });
 * const [configMaps] = store.types();
 * const cm = await store.create(configMaps, { metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
 * for await (const event of store.watch(configMaps, { resourceVersion: cm.metadata.resourceVersion })) console.log(event.type);
 */
export class Store implements Backend {
  readonly name: string;
  readonly #core: StoreCore;
  readonly #fences: FenceTable;
  readonly #gc: GarbageCollector;

  constructor(options: StoreOptions = {}) {
    const resolved = resolveStoreOptions(options);
    this.name = resolved.name;
    this.#core = new StoreCore(resolved);
    // A raised mark is kept in the data directory first: a write is never acknowledged under a
    // mark that a restart would forget.
    this.#fences = new FenceTable({ keep: (marks) => this.#core.saveFences(marks) });
    this.#fences.restore(this.#core.loadedFences);
    this.#gc = new GarbageCollector(this.#core);
    this.#core.onCommit = (td, _key, prev, next) => this.#gc.onCommit(td, prev, next);
    try {
      for (const type of resolved.types) this.registerType(type);
    } catch (error) {
      this.#core.close();
      throw error;
    }
  }

  /** The revision of the last write (the newest resourceVersion). */
  get revision(): number {
    return this.#core.revision;
  }

  /** Resuming a watch or a paginated list needs a revision `>=` this one; older ones are expired. */
  get compactedRevision(): number {
    this.#core.compact();
    return this.#core.timeline.compacted;
  }

  /**
   * What the watch history holds now: events retained, the approximate bytes of the superseded and
   * deleted versions they keep alive (bounded by `maxHistoryBytes`), and the compacted revision.
   */
  history(): HistoryStats {
    this.#core.compact();
    const { timeline } = this.#core;
    return { events: timeline.length, bytes: timeline.bytes, compactedRevision: timeline.compacted };
  }

  /**
   * Serves a type (at runtime, e.g. for a CRD). Registering a type again replaces its definition
   * and keeps its objects. Throws an OptionsError for a malformed type and a TypeConflictError when
   * another type serves its apiVersion + kind. Returns the normalised type.
   */
  registerType(type: ResourceType): ResourceType {
    const td = this.#core.register(type);
    this.#gc.resync(td);
    return td.type;
  }

  /**
   * Stops serving a type: deletes its objects (each a write, DELETED to watchers, finalizers
   * ignored), then ends its watches. Later operations on it reject with NotFoundError.
   */
  async unregisterType(type: ResourceType): Promise<void> {
    this.#core.unregister(type);
    await this.#core.durable();
  }

  /** The served types. */
  types(): ResourceType[] {
    return this.#core.served().map((td) => td.type);
  }

  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#core.byKind(apiVersion, kind)?.type;
  }

  /** The served type of a group, version and resource (plural). */
  findResource(resource: {
    readonly group: string;
    readonly version: string;
    readonly resource: string;
  }): Promise<ResourceType | undefined> {
    const { group, version } = resource;
    return Promise.resolve(
      this.types().find((t) => t.group === group && t.version === version && t.plural === resource.resource),
    );
  }

  /** Resolves when the garbage collector and namespace lifecycle have nothing left to do. */
  gcSettled(): Promise<void> {
    return this.#gc.settled();
  }

  /** Forgets all history now: older resourceVersions and continue tokens expire (410). */
  compact(): void {
    this.#core.checkOpen();
    this.#core.timeline.compact({ oldestTime: Number.POSITIVE_INFINITY, maxEvents: 0, maxBytes: 0 });
  }

  /**
   * Writes a snapshot of the data directory now and restarts its log (no-op without `dataDir`).
   * Throws a StorePersistError if that fails (the data directory stays consistent).
   */
  snapshot(): void {
    this.#core.checkOpen();
    this.#core.snapshot();
  }

  /**
   * The store's health, for readiness probes and metrics: `ok` is false while the data directory
   * refuses writes or its last snapshot attempt failed (writes still succeed then; the snapshot is
   * retried with backoff). `persistence` is undefined without `dataDir`.
   *
   * @example
   * const { ok, persistence } = store.health();
   * if (!ok) console.warn(persistence?.lastError);
   */
  health(): StoreHealth {
    const persistence = this.#core.persistenceStatus();
    return { ok: !this.#core.closed && (persistence?.healthy ?? true), persistence };
  }

  /** Ends every watch, makes every write durable and closes the data directory. Later calls reject. */
  async close(): Promise<void> {
    if (this.#core.closed) return;
    await this.#core.durable().catch(() => undefined);
    this.#core.close();
  }

  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T> {
    checkSignal(options.signal);
    const td = this.#core.resolve(type);
    const object = td.latest(keyOf(td, key));
    if (object === undefined) throw notFound(td.type, key.name);
    return (options.metadataOnly === true ? metadataProjection(td.type)(object) : object) as T;
  }

  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    checkSignal(options.signal);
    const td = this.#core.resolve(type);
    const page = await listObjects(this.#core, td, options);
    return options.metadataOnly === true ? metadataOnlyList<T>(td.type, page) : (page as ObjectList<T>);
  }

  /**
   * Watches a type. Each `[Symbol.asyncIterator]()` call opens one watch; every error (unknown type,
   * bad selector, ExpiredError, TimeoutError for a future resourceVersion) is thrown by `next()`.
   * A consumer more than `maxWatcherBuffer` events behind gets an ExpiredError: relist and rewatch.
   * With `metadataOnly`, each event's object is its stored metadata under the kind's apiVersion and
   * kind (frozen, shared, the body never copied).
   */
  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    const core = this.#core;
    const events: AsyncIterable<WatchEvent<T>> = {
      [Symbol.asyncIterator]: () =>
        new Watcher(core, type, options) as unknown as AsyncIterator<WatchEvent<T>>,
    };
    if (options.metadataOnly !== true) return events;
    return metadataOnlyEvents<T>(type, events);
  }

  async create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    checkSignal(options.signal);
    checkWriteFence(this.#fences, options);
    const result = createObject(this.#core, this.#core.resolve(type), object, options);
    await this.#core.durable();
    return result as T;
  }

  async update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return this.#update(type, object, options, 'main');
  }

  async updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return this.#update(type, object, options, 'status');
  }

  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    checkSignal(options.signal);
    const td = this.#core.resolve(type);
    checkWriteFence(this.#fences, options);
    const result = patchObject(this.#core, td, keyOf(td, key), key.name, patch, options);
    await this.#core.durable();
    return result as T;
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: DeleteOptions = {},
  ): Promise<DeleteResult<T>> {
    checkSignal(options.signal);
    const td = this.#core.resolve(type);
    checkWriteFence(this.#fences, options);
    const result = deleteObject(this.#core, td, keyOf(td, key), options);
    await this.#core.durable();
    return result as DeleteResult<T>;
  }

  /**
   * Raises the store's mark for the fence's name to `fence` (see {@link Backend.announceFence}):
   * from now on writes carrying a lower epoch of that name are refused with a FencedError. With a
   * data directory the marks are kept in it (durably, before the mark is raised) and survive a
   * restart; without one they live as long as the store.
   */
  async announceFence(fence: Fence, signal?: AbortSignal): Promise<Fence> {
    checkSignal(signal);
    checkFence(fence);
    return this.#fences.check(fence);
  }

  /** The store's fence marks, one per name (for operations pages). */
  fenceMarks(): Fence[] {
    return this.#fences.marks();
  }

  async #update<T extends KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions,
    mode: 'main' | 'status',
  ): Promise<T> {
    checkSignal(options.signal);
    const td = this.#core.resolve(type);
    const draft = toDraft(td.type, object);
    checkWriteFence(this.#fences, options);
    const result = updateObject(this.#core, td, draft, {
      mode,
      requireResourceVersion: true,
      dryRun: options.dryRun === true,
    });
    await this.#core.durable();
    return result as T;
  }
}
