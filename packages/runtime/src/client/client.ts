import {
  type Backend,
  type DeleteOptions,
  type DeleteResult,
  type Fence,
  type KubeObjectLike,
  metadataProjection,
  NotFoundError,
  type ObjectOf,
  type Patch,
  type PatchOptions,
  qualifiedResource,
  type ResourceType,
  typeId,
  type WriteOptions,
} from '../backend/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { type KubeObject, keyToString, type ObjectKey, type PartialObjectMetadata } from '../object/index.ts';
import { durationMs, integer } from '../options.ts';
import { objectSelector } from '../selector/index.ts';
import {
  type ClientInterceptor,
  type ClientRequestInfo,
  type ClientVerb,
  interceptRequest,
  joinRequestInterceptors,
  prepareWrite,
} from './intercept.ts';
import { type ObjectReader, PendingWrites } from './pending-writes.ts';
import { type AnyResourceType, type UntypedResourceType, untyped } from './typed.ts';
import { currentWriter, recordWrite, type WriterScope } from './writer-scope.ts';

/**
 * Gives the client a synced cache of a type (a shared informer's), creating it on first use; with
 * `metadataOnly`, a cache of the kind's metadata only (a metadata-only informer, separate from the
 * full one). A provider that ignores it still works: the client projects what it reads. It may
 * return the reader itself when it has synced already (a manager's does): the read then takes it
 * at once instead of awaiting a promise.
 */
export type CacheProvider = (
  type: ResourceType,
  signal?: AbortSignal,
  options?: { readonly metadataOnly?: boolean },
) => ObjectReader | Promise<ObjectReader>;

export interface ClientOptions {
  /** Where writes (and uncached reads) go. */
  readonly backend: Backend;
  /** Where reads come from. Default: none, every read goes to the backend. */
  readonly cache?: CacheProvider;
  /**
   * The cache of a type if one is synced already, without starting one: a delete reads the
   * object's uid there for read-your-writes, and never waits for (or starts) an informer the
   * delete does not need. Default: none (deletes record no uid).
   */
  readonly syncedCache?: (type: ResourceType) => ObjectReader | undefined;
  /** Field manager recorded on writes that do not name one. */
  readonly fieldManager?: string;
  readonly clock?: Clock;
  /** How long a written object may be shown ahead of a lagging cache. Default 60 000. */
  readonly readYourWritesTtlMs?: number;
  /** Bound on remembered writes. Default 10 000. */
  readonly maxPendingWrites?: number;
  /** A hook around each request sent to the backend (a tracing adapter's). Default none. */
  readonly interceptor?: ClientInterceptor;
  /**
   * The fence every write carries unless it names its own (a manager passes its leader term's):
   * a fencing backend refuses writes of a stale epoch. Asked at each write. Default none.
   */
  readonly fence?: () => Fence | undefined;
}

/** Options of a read. */
export interface ReadOptions {
  readonly signal?: AbortSignal;
}

export interface ClientListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly signal?: AbortSignal;
}

/**
 * Reads from the cache, writes to the backend (controller-runtime's default client), with
 * read-your-writes: after a write returns resourceVersion X, reading that object never returns
 * an older version, even while the cache lags (see {@link PendingWrites}).
 *
 * A write made inside a reconcile is recorded as that reconcile's (see {@link WriteLedger}), so the
 * event that echoes it names the reconcile behind it (`Cause.writtenBy`).
 *
 * Every method takes the shape of its objects from the resource type: `get(deploymentType, key)`
 * returns a `Deployment`, `create(configMapType, { … })` checks the object against `ConfigMap`. An
 * explicit type argument overrides it, for other models of the same kind
 * (`get<V1ConfigMap>(configMapType, key)` with `@kubernetes/client-node`) and for types declared
 * as a plain `ResourceType`.
 *
 * @example
 * const deployment = await client.get(deploymentType, { namespace, name }); // a Deployment
 * const site = await client.get<Website>(websiteType, { namespace, name });
 * await client.updateStatus(websiteType, { ...site, status: { ready: true } });
 */
export class Client {
  readonly backend: Backend;
  readonly #cache: CacheProvider | undefined;
  readonly #syncedCache: ((type: ResourceType) => ObjectReader | undefined) | undefined;
  readonly #fieldManager: string | undefined;
  readonly #fence: (() => Fence | undefined) | undefined;
  readonly #pending: PendingWrites;
  readonly #clock: Clock;
  #interceptor: ClientInterceptor | undefined;

  constructor(options: ClientOptions) {
    if (typeof options?.backend?.get !== 'function')
      throw new OptionsError('backend', options?.backend, 'a Backend');
    if (options.cache !== undefined && typeof options.cache !== 'function') {
      throw new OptionsError('cache', options.cache, 'a function (type) => Promise<ObjectReader>');
    }
    if (options.syncedCache !== undefined && typeof options.syncedCache !== 'function') {
      throw new OptionsError(
        'syncedCache',
        options.syncedCache,
        'a function (type) => ObjectReader | undefined',
      );
    }
    this.backend = options.backend;
    this.#cache = options.cache;
    this.#syncedCache = options.syncedCache;
    this.#fieldManager = options.fieldManager;
    if (options.fence !== undefined && typeof options.fence !== 'function')
      throw new OptionsError('fence', options.fence, 'a function () => Fence | undefined');
    this.#fence = options.fence;
    this.#clock = options.clock ?? realClock;
    this.#pending = new PendingWrites(
      this.#clock,
      durationMs('readYourWritesTtlMs', options.readYourWritesTtlMs, 60_000),
      integer('maxPendingWrites', options.maxPendingWrites, 10_000, 1),
    );
    if (options.interceptor !== undefined) this.observe({ interceptor: options.interceptor });
  }

  /**
   * Adds a request interceptor after construction (an adapter instrumenting a manager's client);
   * one added later runs inside the earlier ones.
   */
  observe(hooks: { readonly interceptor?: ClientInterceptor }): void {
    if (typeof hooks !== 'object' || hooks === null) throw new OptionsError('hooks', hooks, 'an object');
    const interceptor = hooks.interceptor;
    if (interceptor === undefined) return;
    if (typeof interceptor?.aroundRequest !== 'function')
      throw new OptionsError('interceptor', interceptor, 'an object with an aroundRequest method');
    this.#interceptor = joinRequestInterceptors(this.#interceptor, interceptor);
  }

  /**
   * The object, from the cache when there is one. Throws NotFoundError when it does not exist.
   * Its shape comes from the type (`get(deploymentType, key)` is a `Deployment`) or from an
   * explicit type argument (`get<V1ConfigMap>(configMapType, key)`).
   */
  get<R extends AnyResourceType>(type: R, key: ObjectKey, options?: ReadOptions): Promise<ObjectOf<R>>;
  get<T extends KubeObjectLike>(type: AnyResourceType, key: ObjectKey, options?: ReadOptions): Promise<T>;
  async get<T extends KubeObjectLike>(
    type: AnyResourceType,
    key: ObjectKey,
    options?: ReadOptions,
  ): Promise<T> {
    if (this.#cache === undefined) {
      return (await this.#send('get', type, key, undefined, undefined, () =>
        this.backend.get(untyped(type), key, options),
      )) as T;
    }
    // A synced kind's reader comes at once: no await, so the read does not suspend.
    const provided = this.#cache(untyped(type), options?.signal);
    const reader = isPromise(provided) ? await provided : provided;
    if (reader.partial === true) {
      const found = this.#pending.resolve(this.#id(type, key), reader.get(key), reader);
      if (found !== undefined) return found as KubeObjectLike as T;
      // Outside this replica's shard, or absent: the backend says which.
      return (await this.#send('get', type, key, undefined, undefined, () =>
        this.backend.get(untyped(type), key, options),
      )) as T;
    }
    return this.#cached(type, key, reader) as KubeObjectLike as T;
  }

  /** Objects of a type, from the cache when there is one, in key order. */
  list<R extends AnyResourceType>(type: R, options?: ClientListOptions): Promise<ObjectOf<R>[]>;
  list<T extends KubeObjectLike>(type: AnyResourceType, options?: ClientListOptions): Promise<T[]>;
  async list<T extends KubeObjectLike>(type: AnyResourceType, options: ClientListOptions = {}): Promise<T[]> {
    const provided = this.#cache?.(untyped(type), options.signal);
    const reader = isPromise(provided) ? await provided : provided;
    const items =
      reader === undefined || reader.partial === true
        ? await this.#listPages(type, options)
        : this.#listCached(type, reader, options);
    return items as KubeObjectLike[] as T[];
  }

  /**
   * Only the metadata of an object (controller-runtime's `PartialObjectMetadata` get): from the
   * kind's metadata-only cache when the client has a cache (a manager's client starts that
   * informer on first use: it never holds the bodies), else a metadata-only get from the backend.
   * `apiVersion` and `kind` are the type's. Throws NotFoundError when it does not exist.
   *
   * @example
   * const { metadata } = await client.getMetadata(secretType, { namespace, name });
   */
  async getMetadata(
    type: AnyResourceType,
    key: ObjectKey,
    options?: ReadOptions,
  ): Promise<PartialObjectMetadata> {
    const live = () =>
      this.#send('get', type, key, undefined, undefined, () =>
        this.backend.get(untyped(type), key, { ...options, metadataOnly: true }),
      );
    if (this.#cache === undefined) return metadataProjection(type)(await live());
    const provided = this.#cache(untyped(type), options?.signal, METADATA_ONLY);
    const reader = isPromise(provided) ? await provided : provided;
    if (reader.partial === true) {
      const found = this.#pending.resolve(this.#id(type, key), reader.get(key), reader);
      return metadataProjection(type)(found ?? (await live()));
    }
    return metadataProjection(type)(this.#cached(type, key, reader));
  }

  /**
   * Only the metadata of the objects of a type, in key order: from the kind's metadata-only cache
   * when the client has a cache (read-your-writes as for {@link Client.list}), else metadata-only
   * list pages from the backend. Each object is `{ apiVersion, kind, metadata }` of the type.
   *
   * @example
   * const owned = await client.listMetadata(podType, { namespace, labelSelector: 'app=web' });
   */
  async listMetadata(
    type: AnyResourceType,
    options: ClientListOptions = {},
  ): Promise<PartialObjectMetadata[]> {
    const reader =
      this.#cache === undefined ? undefined : await this.#cache(untyped(type), options.signal, METADATA_ONLY);
    const items =
      reader === undefined || reader.partial === true
        ? await this.#listPages(type, options, true)
        : this.#listCached(type, reader, options);
    return items.map(metadataProjection(type));
  }

  /** The object of `key` in `reader`, with this client's pending writes overlaid; NotFoundError if none. */
  #cached(type: AnyResourceType, key: ObjectKey, reader: ObjectReader): KubeObject {
    const cached = reader.get(key);
    // No write pending: no id to build for the lookup.
    const found =
      this.#pending.size === 0 ? cached : this.#pending.resolve(this.#id(type, key), cached, reader);
    if (found === undefined) {
      throw new NotFoundError(`${qualifiedResource(type)} "${key.name}" not found`, {
        details: { name: key.name, group: type.group, kind: type.plural },
      });
    }
    return found;
  }

  /** Every object of a type from the backend, in pages of 500 (metadata only if asked). */
  async #listPages(
    type: AnyResourceType,
    options: ClientListOptions,
    metadataOnly = false,
  ): Promise<KubeObject[]> {
    const items: KubeObject[] = [];
    let token: string | undefined;
    do {
      const pageOptions = {
        ...options,
        limit: 500,
        ...(metadataOnly ? { metadataOnly } : {}),
        ...(token ? { continue: token } : {}),
      };
      const page = await this.#send('list', type, options, undefined, undefined, () =>
        this.backend.list(untyped(type), pageOptions),
      );
      items.push(...page.items);
      token = page.continue;
    } while (token);
    return items;
  }

  /** The cached objects of a type that match, with this client's pending writes overlaid, in key order. */
  #listCached(type: AnyResourceType, reader: ObjectReader, options: ClientListOptions): KubeObject[] {
    const matches = objectSelector(options);
    const byKey = new Map<string, KubeObject>();
    for (const o of reader.list(options)) {
      if (matches(o))
        byKey.set(keyToString({ namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' }), o);
    }
    const prefix = `${typeId(type)}|`;
    for (const id of [...this.#pending.idsWithPrefix(prefix)]) {
      const keyText = id.slice(prefix.length);
      const slash = keyText.indexOf('/');
      const key = { namespace: keyText.slice(0, slash), name: keyText.slice(slash + 1) };
      const resolved = this.#pending.resolve(id, reader.get(key), reader);
      const k = keyToString(key);
      if (resolved !== undefined && matches(resolved)) byKey.set(k, resolved);
      else byKey.delete(k);
    }
    return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  /**
   * Creates the object and returns it as stored. With a typed resource type the object is checked
   * against its shape (`create(deploymentType, { metadata, spec })`); with a plain `ResourceType`
   * the result has the object's own type.
   */
  create<T extends KubeObjectLike = never>(
    type: AnyResourceType,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  create<T extends KubeObjectLike, S extends KubeObjectLike = KubeObject>(
    type: UntypedResourceType<S>,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  create<T extends KubeObjectLike>(
    type: ResourceType<T>,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  async create<T extends KubeObjectLike>(
    type: AnyResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    const writer = currentWriter();
    const key = keyOfObject(object);
    const sent = this.#prepare('create', type, key, options, undefined, object);
    const created = await this.#send('create', type, key, options, undefined, () =>
      this.backend.create(untyped(type), sent as KubeObject, this.#write(options)),
    );
    return this.#remember(type, created, options, writer) as KubeObjectLike as T;
  }

  /** Replaces the object; a stale `metadata.resourceVersion` is a ConflictError. Typed like {@link Client.create}. */
  update<T extends KubeObjectLike = never>(
    type: AnyResourceType,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  update<T extends KubeObjectLike, S extends KubeObjectLike = KubeObject>(
    type: UntypedResourceType<S>,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  update<T extends KubeObjectLike>(
    type: ResourceType<T>,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  async update<T extends KubeObjectLike>(
    type: AnyResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    const writer = currentWriter();
    const key = keyOfObject(object);
    const sent = this.#prepare('update', type, key, options, undefined, object);
    const updated = await this.#send('update', type, key, options, undefined, () =>
      this.backend.update(untyped(type), sent as KubeObject, this.#write(options)),
    );
    return this.#remember(type, updated, options, writer) as KubeObjectLike as T;
  }

  /** Replaces only `.status` (when status is a subresource). Typed like {@link Client.create}. */
  updateStatus<T extends KubeObjectLike = never>(
    type: AnyResourceType,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  updateStatus<T extends KubeObjectLike, S extends KubeObjectLike = KubeObject>(
    type: UntypedResourceType<S>,
    object: T,
    options?: WriteOptions,
  ): Promise<T>;
  updateStatus<T extends KubeObjectLike>(
    type: ResourceType<T>,
    object: NoInfer<T>,
    options?: WriteOptions,
  ): Promise<T>;
  async updateStatus<T extends KubeObjectLike>(
    type: AnyResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    const writer = currentWriter();
    const key = keyOfObject(object);
    const sent = this.#prepare('update', type, key, options, STATUS, object);
    const updated = await this.#send('update', type, key, options, STATUS, () =>
      this.backend.updateStatus(untyped(type), sent as KubeObject, this.#write(options)),
    );
    return this.#remember(type, updated, options, writer) as KubeObjectLike as T;
  }

  /** Patches the object (or its status) and returns it as stored; typed like {@link Client.get}. */
  patch<R extends AnyResourceType>(
    type: R,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<ObjectOf<R>>;
  patch<T extends KubeObjectLike>(
    type: AnyResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T>;
  async patch<T extends KubeObjectLike>(
    type: AnyResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    const writer = currentWriter();
    let sent = patch;
    const interceptor = this.#interceptor;
    if (interceptor?.prepareWrite !== undefined && !options?.dryRun) {
      const info = requestInfo('patch', type, key, options, options?.subresource);
      sent = prepareWrite(interceptor, info, { patch }).patch;
    }
    const patched = await this.#send('patch', type, key, options, options?.subresource, () =>
      this.backend.patch(untyped(type), key, sent, this.#write(options)),
    );
    return this.#remember(type, patched, options, writer) as KubeObjectLike as T;
  }

  /** Deletes the object, or starts its deletion while finalizers remain; typed like {@link Client.get}. */
  delete<R extends AnyResourceType>(
    type: R,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<ObjectOf<R>>>;
  delete<T extends KubeObjectLike>(
    type: AnyResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>>;
  async delete<T extends KubeObjectLike>(
    type: AnyResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>> {
    const writer = currentWriter();
    // The uid of the incarnation being deleted, so that a read hides it but not a recreated one. Read
    // only from a cache that is synced already: a delete must not start an informer (a cluster-wide
    // watch the caller may not be allowed) nor wait for one to sync.
    const synced = this.#cache === undefined ? undefined : this.#syncedCache?.(untyped(type));
    const uid =
      synced === undefined
        ? undefined
        : this.#pending.resolve(this.#id(type, key), synced.get(key), synced)?.metadata.uid;
    const result = await this.#send('delete', type, key, options, undefined, () =>
      this.backend.delete(untyped(type), key, this.#fenced(options)),
    );
    if (!options?.dryRun) {
      if (result.status === 'pending') recordWrite(result.object, writer);
      if (result.status === 'pending') this.#pending.recordWrite(this.#id(type, key), result.object);
      else this.#pending.recordDelete(this.#id(type, key), uid);
    }
    return result as DeleteResult<KubeObjectLike> as DeleteResult<T>;
  }

  /** `call` (a backend request), through the interceptor when there is one. */
  #send<T>(
    verb: ClientVerb,
    type: AnyResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined },
    options: { readonly dryRun?: boolean } | undefined,
    subresource: 'status' | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    const interceptor = this.#interceptor;
    if (interceptor === undefined) return call();
    return interceptRequest(interceptor, requestInfo(verb, type, key, options, subresource), call);
  }

  /** The object a write sends: `object`, or what the interceptor's `prepareWrite` makes of it. */
  #prepare(
    verb: ClientVerb,
    type: AnyResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined },
    options: { readonly dryRun?: boolean } | undefined,
    subresource: 'status' | undefined,
    object: KubeObjectLike,
  ): KubeObjectLike {
    const interceptor = this.#interceptor;
    if (interceptor?.prepareWrite === undefined || options?.dryRun) return object;
    return prepareWrite(interceptor, requestInfo(verb, type, key, options, subresource), { object }).object;
  }

  #write<O extends WriteOptions>(options: O | undefined): O | undefined {
    const fenced = this.#fenced(options);
    if (this.#fieldManager === undefined || fenced?.fieldManager !== undefined) return fenced;
    return { ...(fenced ?? {}), fieldManager: this.#fieldManager } as O;
  }

  /** `options` with the client's fence, unless they carry one or the client has none now. */
  #fenced<O extends { readonly fence?: Fence }>(options: O | undefined): O | undefined {
    if (this.#fence === undefined || options?.fence !== undefined) return options;
    const fence = this.#fence();
    return fence === undefined ? options : ({ ...(options ?? {}), fence } as O);
  }

  #remember(
    type: AnyResourceType,
    object: KubeObject,
    options: WriteOptions | undefined,
    writer: WriterScope | undefined,
  ): KubeObject {
    if (options?.dryRun) return object;
    const cached = this.#cache !== undefined;
    if (writer === undefined && !cached) return object;
    // One clock read for the write ledger and read-your-writes.
    const now = this.#clock.now();
    recordWrite(object, writer, this.#clock, now);
    if (cached) {
      const key = { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
      this.#pending.recordWrite(this.#id(type, key), object, now);
    }
    return object;
  }

  #id(type: AnyResourceType, key: ObjectKey): string {
    return `${typeId(type)}|${key.namespace}/${key.name}`;
  }
}

/** What an interceptor is told about a request. */
function requestInfo(
  verb: ClientVerb,
  type: AnyResourceType,
  key: { readonly namespace?: string | undefined; readonly name?: string | undefined },
  options: { readonly dryRun?: boolean } | undefined,
  subresource: 'status' | undefined,
): ClientRequestInfo {
  return {
    verb,
    group: type.group,
    version: type.version,
    resource: type.plural,
    ...(subresource === undefined ? {} : { subresource }),
    ...(key.namespace ? { namespace: key.namespace } : {}),
    ...(typeof key.name === 'string' && key.name !== '' ? { name: key.name } : {}),
    ...(options?.dryRun ? { dryRun: true } : {}),
  };
}

/** What a metadata-only read asks its cache provider for. */
const METADATA_ONLY = Object.freeze({ metadataOnly: true });

/** The `status` subresource, for {@link Client.updateStatus}. */
const STATUS = 'status';

/** The namespace and name of an object to write (a name may be missing: `generateName`). */
function keyOfObject(object: KubeObjectLike): { namespace?: string; name?: string } {
  const metadata = (object as { metadata?: { namespace?: unknown; name?: unknown } }).metadata;
  const namespace = metadata?.namespace;
  const name = metadata?.name;
  return {
    ...(typeof namespace === 'string' ? { namespace } : {}),
    ...(typeof name === 'string' ? { name } : {}),
  };
}

/** A provider's answer still to come (a reader has no `then`). */
function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}
