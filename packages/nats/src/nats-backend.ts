import {
  apiVersionOf,
  type Backend,
  checkFence,
  type DeleteOptions,
  type DeleteResult,
  type Fence,
  FencedError,
  type GetOptions,
  type KubeObject,
  type ListOptions,
  metadataOnlyEvents,
  metadataOnlyList,
  metadataProjection,
  NotFoundError,
  type ObjectKey,
  type ObjectList,
  OptionsError,
  type Patch,
  type PatchOptions,
  type ResourceType,
  type Runnable,
  resourceType,
  sleepOn,
  statusError,
  typeId,
  UnavailableError,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@converge/runtime';
import { type JetStreamClient, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { natsFailure, TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { ContinueTokens } from './continue-tokens.ts';
import { deleteObject } from './delete.ts';
import { type MalformedValueError, notFound } from './errors.ts';
import { collectGarbage, type GarbageCollectionResult } from './gc.ts';
import { CollectionScheduler } from './gc-scheduler.ts';
import { BUCKET_NAME, defaultBucketName } from './keys.ts';
import { convergeCodec, isKvCodec } from './kv-codec.ts';
import { listObjects } from './list.ts';
import { MarkerReplay, type MarkerReplayOptions } from './marker-replay.ts';
import { type NatsBackendOptions, type ResolvedOptions, resolveOptions } from './options.ts';
import { patchObject } from './patch.ts';
import { readSnapshot } from './snapshot.ts';
import { watchObjects } from './watch.ts';
import { createObject, liveObject, updateObject } from './writes.ts';

/** Counters of a {@link NatsBackend}. */
export interface NatsBackendStats {
  /** Entries skipped by lists and watches (or reported to get) because they are not objects of their type. */
  readonly malformedValues: number;
  /** Garbage-collection passes run (after own deletes, by `collectGarbage` or the runnable). */
  readonly garbageCollections: number;
  /** Paginated-list snapshots held for continue tokens now. */
  readonly heldListSnapshots: number;
}

/** Options of {@link NatsBackend.garbageCollector}. */
export interface GarbageCollectorOptions {
  /** Time between passes. Default 60 000. */
  readonly intervalMs?: number;
}

/** Options of {@link NatsBackend.collectGarbage}. */
export interface CollectGarbageOptions {
  readonly signal?: AbortSignal;
}

/**
 * The {@link Backend} over NATS JetStream KV: one bucket per resource type, Kubernetes-shaped JSON
 * objects as values, the KV revision (stream sequence) as resourceVersion. Start it with
 * {@link NatsBackend.connect}; see the package documentation for the full contract. Returned
 * objects are fresh copies the caller may change.
 *
 * @example
 * const backend = await NatsBackend.connect({ servers: 'nats://127.0.0.1:4222', types: [widgets] });
 * const created = await backend.create(widgets, { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
 * await backend.update(widgets, { ...created, spec: { size: 2 } }); // ConflictError if it changed meanwhile
 * for await (const event of backend.watch(widgets, { resourceVersion: created.metadata.resourceVersion })) {
 *   console.log(event.type);
 * }
 */
export class NatsBackend implements Backend {
  /** `nats:<server>` for logs. */
  readonly name: string;
  readonly #nc: NatsConnection;
  readonly #ownsConnection: boolean;
  readonly #js: JetStreamClient;
  readonly #kvm: Kvm;
  readonly #options: ResolvedOptions;
  readonly #buckets = new Map<string, TypeBucket>();
  readonly #byKind = new Map<string, ResourceType>();
  readonly #bucketOwners = new Map<string, string>();
  readonly #closing = new AbortController();
  /** The highest fence announced here of each name, raised in every bucket registered later too. */
  readonly #fences = new Map<string, Fence>();
  readonly #ctx: BackendContext;
  #malformed = 0;
  #collections = 0;
  readonly #scheduler: CollectionScheduler;

  private constructor(nc: NatsConnection, ownsConnection: boolean, options: ResolvedOptions) {
    this.#nc = nc;
    this.#ownsConnection = ownsConnection;
    this.#options = options;
    this.#js = jetstream(nc);
    this.#kvm = new Kvm(this.#js);
    this.name = `nats:${nc.getServer()}`;
    const continueTokens = new ContinueTokens(
      options.clock,
      options.continueTtlMs,
      options.maxContinueSnapshots,
    );
    this.#scheduler = new CollectionScheduler(
      (signal) => {
        this.#collections++;
        return collectGarbage(this.#ctx, signal);
      },
      this.#closing.signal,
      options.logger.child({ backend: this.name }),
    );
    this.#ctx = {
      js: this.#js,
      options,
      continueTokens,
      reportMalformed: (error) => this.#reportMalformed(error),
      garbageMayExist: () => {
        if (options.garbageCollection) this.#scheduler.request();
      },
      resolveType: (apiVersion, kind) => this.resolveType(apiVersion, kind),
      bucketOf: (type) => this.#bucket(type),
      buckets: () => [...this.#buckets.values()],
    };
  }

  /**
   * Connects (or adopts `options.connection`), checks that JetStream is enabled and registers
   * `options.types`, creating their buckets when missing. Bad options are an OptionsError; an
   * unreachable server or one without JetStream an UnavailableError.
   *
   * @example
   * const backend = await NatsBackend.connect({ servers: 'nats://127.0.0.1:4222', types: [widgets] });
   */
  static async connect(options: NatsBackendOptions): Promise<NatsBackend> {
    const resolved = resolveOptions(options);
    let nc = resolved.connection;
    const owns = nc === undefined;
    if (nc === undefined) {
      try {
        nc = await connect({
          servers: [...(resolved.servers ?? [])],
          name: 'converge',
          maxReconnectAttempts: -1,
        });
      } catch (error) {
        throw new UnavailableError(`nats: cannot connect to ${(resolved.servers ?? []).join(', ')}`, {
          cause: error,
        });
      }
    }
    const backend = new NatsBackend(nc, owns, resolved);
    try {
      await jetstreamManager(nc);
      for (const type of resolved.types) await backend.registerType(type);
    } catch (error) {
      await backend.close();
      if (error instanceof OptionsError) throw error;
      throw natsFailure(error, 'connect');
    }
    return backend;
  }

  /**
   * Serves `type` from now on, creating its bucket (with the backend's `history` and `replicas`)
   * if it does not exist. Registering the same type again is a no-op. A type whose bucket name,
   * `apiVersion` + `kind` or `group/version/plural` clashes with a served one is an OptionsError.
   */
  async registerType(type: ResourceType): Promise<ResourceType> {
    const checked = resourceType(type);
    const id = typeId(checked);
    const gvk = `${apiVersionOf(checked)}\u0000${checked.kind}`;
    const served = this.#buckets.get(id);
    if (served !== undefined) {
      if (served.type.kind !== checked.kind) {
        throw new OptionsError('type', type, `a type other than ${id} (served as kind ${served.type.kind})`);
      }
      return served.type;
    }
    const sameKind = this.#byKind.get(gvk);
    if (sameKind !== undefined) {
      throw new OptionsError(
        'type',
        type,
        `a kind not yet served (${checked.kind} is served as ${typeId(sameKind)})`,
      );
    }
    const name = this.#options.bucketFor(checked) ?? defaultBucketName(this.#options.bucketPrefix, checked);
    if (typeof name !== 'string' || !BUCKET_NAME.test(name)) {
      throw new OptionsError('bucketFor', name, 'a bucket name of [-_A-Za-z0-9]');
    }
    const codec = this.#options.codecFor(checked) ?? convergeCodec;
    if (!isKvCodec(codec)) throw new OptionsError('codecFor', codec, 'a KvCodec');
    const owner = this.#bucketOwners.get(name);
    if (owner !== undefined && owner !== id) {
      throw new OptionsError('bucketFor', name, `a bucket no other type uses (${owner} uses it)`);
    }
    this.#bucketOwners.set(name, id);
    try {
      await this.#kvm.create(name, { history: this.#options.history, replicas: this.#options.replicas });
    } catch (error) {
      this.#bucketOwners.delete(name);
      throw natsFailure(error, `create of bucket ${name}`);
    }
    const bucket = new TypeBucket(this.#js, await jetstreamManager(this.#nc), checked, name, codec);
    await bucket.markIfEmpty();
    // A holder announced before this kind was served: its stale predecessors must meet the mark here too.
    for (const fence of this.#fences.values()) await raiseOrKeep(bucket, fence);
    this.#buckets.set(id, bucket);
    this.#byKind.set(gvk, checked);
    return checked;
  }

  /**
   * Tells every bucket of this backend that `fence.holder` took `fence.name` at `fence.epoch`: the
   * mark of the name in each bucket is raised to it, and from then on a write with a lower epoch
   * (or the same epoch from another holder) is refused with a {@link FencedError} — in the same
   * step as it would commit (see the NATS section of docs/guide/fencing.md). Resolves to the mark;
   * rejects with a FencedError when a bucket holds a higher one. Buckets registered later get the
   * mark before they serve.
   */
  async announceFence(fence: Fence, signal?: AbortSignal): Promise<Fence> {
    checkFence(fence);
    let mark: Fence = { name: fence.name, holder: fence.holder, epoch: fence.epoch };
    for (const bucket of this.#buckets.values()) {
      signal?.throwIfAborted();
      mark = await bucket.announce(fence);
    }
    const kept = this.#fences.get(fence.name);
    if (kept === undefined || kept.epoch < mark.epoch) this.#fences.set(fence.name, mark);
    return mark;
  }

  /** The served type of `apiVersion` + `kind`. */
  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#byKind.get(`${apiVersion}\u0000${kind}`);
  }

  /** The served type of a group, version and resource (plural). */
  findResource(resource: {
    readonly group: string;
    readonly version: string;
    readonly resource: string;
  }): Promise<ResourceType | undefined> {
    for (const type of this.#byKind.values()) {
      if (
        type.group === resource.group &&
        type.version === resource.version &&
        type.plural === resource.resource
      )
        return Promise.resolve(type);
    }
    return Promise.resolve(undefined);
  }

  /** The bucket a served type lives in. */
  bucketName(type: ResourceType): string {
    return this.#bucket(type).name;
  }

  /**
   * One object. With `metadataOnly` it is projected to `{ apiVersion, kind, metadata }` after it
   * is decoded (a KV entry is one value: the body travels, but is not kept).
   */
  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T> {
    const bucket = this.#bucket(type);
    const kvKey = bucket.key(key.namespace ?? '', key.name);
    const object = kvKey === undefined ? undefined : liveObject(await bucket.current(kvKey));
    if (object === undefined) throw notFound(bucket.type, key.name);
    return (options.metadataOnly === true ? metadataProjection(bucket.type)(object) : object) as T;
  }

  /** A page of one type; with `metadataOnly` each item is projected as in {@link get}. */
  async list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const bucket = this.#bucket(type);
    const page = await listObjects(this.#ctx, bucket, options);
    return options.metadataOnly === true ? metadataOnlyList<T>(bucket.type, page) : (page as ObjectList<T>);
  }

  /**
   * Watches one type. Every failure — an unknown type, a bad selector, an expired revision
   * (ExpiredError), a consumer that could not be recreated (UnavailableError) — surfaces from the
   * iteration, never from this call. With `metadataOnly` each event's object is projected as in
   * {@link get}.
   */
  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    const events = this.#watch(type, options) as AsyncIterable<WatchEvent<T>>;
    return options.metadataOnly === true ? metadataOnlyEvents<T>(type, events) : events;
  }

  async *#watch(type: ResourceType, options: WatchOptions): AsyncGenerator<WatchEvent> {
    yield* watchObjects(this.#ctx, this.#bucket(type), options, this.#closing.signal);
  }

  async create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return (await createObject(this.#ctx, this.#bucket(type), object, options)) as T;
  }

  async update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return (await updateObject(this.#ctx, this.#bucket(type), object, 'main', options)) as T;
  }

  async updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options: WriteOptions = {},
  ): Promise<T> {
    return (await updateObject(this.#ctx, this.#bucket(type), object, 'status', options)) as T;
  }

  async patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    return (await patchObject(this.#ctx, this.#bucket(type), keyOf(key), patch, options)) as T;
  }

  async delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: DeleteOptions = {},
  ): Promise<DeleteResult<T>> {
    return (await deleteObject(this.#ctx, this.#bucket(type), keyOf(key), options)) as DeleteResult<T>;
  }

  /**
   * Runs one garbage-collection pass over every served bucket now (see the package documentation):
   * dependents of owners that are gone — also owners another process deleted — are deleted or lose
   * their dangling references, and owners deleted with `Orphan` or `Foreground` make progress.
   *
   * @example
   * const result = await backend.collectGarbage();
   * console.log(`${result.deleted} dependents deleted`);
   */
  async collectGarbage(options: CollectGarbageOptions = {}): Promise<GarbageCollectionResult> {
    this.#checkOpen();
    const signal =
      options.signal === undefined
        ? this.#closing.signal
        : AbortSignal.any([options.signal, this.#closing.signal]);
    this.#collections++;
    return await collectGarbage(this.#ctx, signal);
  }

  /**
   * A {@link Runnable} that runs {@link NatsBackend.collectGarbage} every `intervalMs` (default 60 000)
   * until its signal aborts; a failed pass is logged and the next one runs on time. It needs
   * leader election (one collector per deployment is enough, though several are safe).
   *
   * @example
   * manager.add(backend.garbageCollector({ intervalMs: 30_000 }));
   */
  garbageCollector(options: GarbageCollectorOptions = {}): Runnable {
    const intervalMs = options.intervalMs ?? 60_000;
    if (typeof intervalMs !== 'number' || !Number.isSafeInteger(intervalMs) || intervalMs < 1) {
      throw new OptionsError('intervalMs', intervalMs, 'a positive integer number of milliseconds');
    }
    const { clock, logger } = this.#options;
    return {
      needLeaderElection: true,
      start: async (signal: AbortSignal): Promise<void> => {
        while (!signal.aborted && !this.#closing.signal.aborted) {
          try {
            await this.collectGarbage({ signal });
          } catch (error) {
            if (!signal.aborted)
              logger.warn({ backend: this.name, err: error }, 'Garbage collection pass failed');
          }
          await sleepOn(clock, intervalMs, signal).catch(() => {});
        }
      },
    };
  }

  /**
   * The opt-in start mode that replays delete and purge markers: a controller source that, when
   * the controller starts, enqueues every key of `type` whose last entry is a `DEL` or `PURGE`
   * marker with a `deleted` cause (marked `purged` for a purge), so a primary deleted or purged
   * while no controller ran gets its `delete` or `purge` run (see {@link MarkerReplay}). Without
   * it (the default) such a primary gets no run, as with a Kubernetes list.
   *
   * @example
   * manager
   *   .controller(applicationType)
   *   .watchesSource(nats.replayMarkers(applicationType))
   *   .complete(async (key, { causes }) => {
   *     if (operationOf(causes) === 'purge') await forgetHistory(key);
   *     return done();
   *   });
   */
  replayMarkers(type: ResourceType, options: MarkerReplayOptions = {}): MarkerReplay {
    if (typeof options !== 'object' || options === null) {
      throw new OptionsError('options', options, 'a MarkerReplayOptions object');
    }
    const { name, namespace } = options;
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw new OptionsError('name', name, 'a non-empty string');
    }
    if (namespace !== undefined && typeof namespace !== 'string') {
      throw new OptionsError('namespace', namespace, 'a string');
    }
    return new MarkerReplay(this.#ctx, this.#bucket(type), options);
  }

  /** Resolves once the passes this backend started after its own deletes are done. */
  async garbageCollectionSettled(): Promise<void> {
    await this.#scheduler.settled();
  }

  /**
   * Forgets history: removes every key's older revisions and the delete markers of deleted keys
   * (each purge bounded by the revision read, so a concurrent write is never lost), and drops the
   * snapshots held for continue tokens. Watches from a revision before the compaction, and those
   * tokens, then expire (410). Current objects are untouched. One purge request per key.
   */
  async compact(): Promise<{ readonly purged: number }> {
    this.#checkOpen();
    this.#ctx.continueTokens.clear();
    let purged = 0;
    for (const bucket of this.#buckets.values()) {
      const snapshot = await readSnapshot(this.#js, bucket, undefined, this.#closing.signal);
      for (const entry of snapshot.entries.values()) {
        purged += await bucket.purgeBelow(entry.key, entry.operation === 'PUT' ? entry.seq : entry.seq + 1);
      }
    }
    return { purged };
  }

  /** Counters since the backend connected. */
  stats(): NatsBackendStats {
    return {
      malformedValues: this.#malformed,
      garbageCollections: this.#collections,
      heldListSnapshots: this.#ctx.continueTokens.size,
    };
  }

  /**
   * Ends every watch, waits for a running garbage-collection pass, and closes the connection if
   * the backend opened it (a connection passed in stays open). Calls after the first do nothing.
   */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.garbageCollectionSettled().catch(() => {});
    this.#ctx.continueTokens.clear();
    if (this.#ownsConnection) await this.#nc.close().catch(() => {});
  }

  #checkOpen(): void {
    if (this.#closing.signal.aborted) throw new UnavailableError(`${this.name}: the backend is closed`);
  }

  #bucket(type: ResourceType): TypeBucket {
    this.#checkOpen();
    const bucket =
      typeof type === 'object' && type !== null && typeof type.plural === 'string'
        ? this.#buckets.get(typeId(type))
        : undefined;
    if (bucket === undefined) throw statusError.unknownResource();
    return bucket;
  }

  #reportMalformed(error: MalformedValueError): void {
    this.#malformed++;
    this.#options.logger.warn(
      {
        backend: this.name,
        bucket: error.bucket,
        key: error.key,
        revision: error.revision,
        reason: error.reason,
      },
      'Skipping a malformed value',
    );
  }
}

function keyOf(key: ObjectKey): ObjectKey {
  if (typeof key !== 'object' || key === null || typeof key.name !== 'string') {
    throw new NotFoundError('the object key must have a name');
  }
  return { namespace: typeof key.namespace === 'string' ? key.namespace : '', name: key.name };
}

/** Raises `bucket`'s mark to `fence`; a bucket that already holds a higher one keeps it. */
async function raiseOrKeep(bucket: TypeBucket, fence: Fence): Promise<void> {
  try {
    await bucket.announce(fence);
  } catch (error) {
    if (!(error instanceof FencedError)) throw error;
  }
}
