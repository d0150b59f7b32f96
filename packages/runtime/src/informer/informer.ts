import { metadataProjection, type ResourceType, type WatchEvent } from '../backend/index.ts';
import {
  type CacheReader,
  type CacheStage,
  type CacheWriter,
  createCache,
  type IndexFunc,
  type ReplaceResult,
} from '../cache/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { EventSource, ObjectEvent } from '../event/index.ts';
import type { Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import type { ShardSelectorExpr } from '../selector/index.ts';
import { joinHooks } from '../workqueue/index.ts';
import { type ObjectCheck, objectCheck } from './check-object.ts';
import { Dispatcher } from './dispatcher.ts';
import { MalformedEventError, TransformFailedError } from './errors.ts';
import { MetadataInterner } from './metadata-interner.ts';
import {
  type InformerOptions,
  type ResolvedInformerOptions,
  reportInformerError,
  resolveInformerOptions,
} from './options.ts';
import { type InformerState, Reflector, type ReflectorSink } from './reflector.ts';
import { type InformerCounters, type InformerMetrics, type InformerStats, newCounters } from './stats.ts';

/** Options of {@link Informer.waitForSync}. */
export interface WaitForSyncOptions {
  /** Give up waiting when a list fails with an error this returns true for (a 403, say). */
  readonly failOn?: (error: unknown) => boolean;
}

/**
 * Keeps a {@link CacheReader} in step with a backend and tells listeners what changed (client-go's
 * SharedIndexInformer, kube-rs' `reflector(watcher())`). It is an {@link EventSource}: plug it into
 * a controller with `fromEventSource(informer, handler)`.
 *
 * **Lifecycle.** Nothing happens until `start(signal)`. It reads the full state of the kind (a
 * consistent read), swaps it into the cache, tells listeners (`create` with `isInInitialList`),
 * marks itself synced, then watches with bookmarks and a random 5–10 minute server timeout,
 * resuming from the last resourceVersion seen whenever a watch ends. By default (`initialList:
 * 'auto'`) the full state is streamed: one watch with `sendInitialEvents` whose ADDED events are
 * staged until the BOOKMARK that ends them, swapped in at once, and which then goes on as the watch
 * (no second request). A backend that rejects that gets paginated lists (`limit` / `continue`, then
 * a watch from the list's resourceVersion) from then on. A streamed list that ends before its end
 * bookmark publishes nothing and is retried after a backoff. It stops when the signal aborts; the
 * cache keeps its last contents.
 *
 * **Errors never stop it and never reach your code.** An expired (410) watch relists from the last
 * seen resourceVersion, then with a consistent read if that list expires too; an expired continue
 * token restarts the list with a consistent read (once at once, then after a backoff). A watch that
 * expires before delivering any event was already too old, so its relist waits a backoff (no
 * relist loop when lists are slower than the history window). Any other list or watch error backs
 * off (800 ms doubling to 30 s, plus up to 100 % jitter, reset after 2 quiet minutes) and retries
 * the same step, re-watching without relisting. A watch that closes within a second with no event
 * counts as an error. Malformed events are logged and skipped. A resourceVersion that goes
 * backwards is not applied: the informer relists with a consistent read instead (safer than
 * client-go, which applies it). Listener exceptions and rejections are caught and logged.
 *
 * **Events.** `create`, `update(old, new)`, `delete` with the last known state (and `purged` when
 * the backend's DELETED says the object's history went too: a NATS KV purge). A duplicate ADDED
 * is an update; a DELETED for an unknown key is dropped. A relist is diffed against the cache:
 * new objects are creates, changed resourceVersions updates, vanished objects deletes with
 * `finalStateUnknown: true` and the cached state; unchanged objects are silent. With
 * `resyncPeriodMs`, every cached object is replayed as `update(o, o)` with `isResync: true` (a
 * replay of the cache, never a relist). A listener that subscribes late first gets a `create`
 * (`isInInitialList: true`) per cached object.
 *
 * **Memory.** Objects go through `transform` (default: drop `managedFields`) and are frozen once
 * into the cache; a relist keeps unchanged objects and never holds the list twice. With
 * `metadataOnly` only `{ apiVersion, kind, metadata }` of each object is listed, watched and
 * cached (see {@link InformerOptions.metadataOnly}), and what objects' metadata repeat (owner
 * references, labels, annotations, timestamps, namespaces) is held once, frozen and shared
 * between them. Long lists, resyncs and event bursts yield to
 * the event loop every 1000 items.
 *
 * @example
 * const pods = new Informer<Pod>({ backend, type: podType, namespace: 'default', resyncPeriodMs: 600_000 });
 * pods.subscribe((event) => console.log(event.type, event.object.metadata.name));
 * void pods.start(signal);
 * await pods.waitForSync(signal);
 * pods.cache.list({ labelSelector: 'app=web' });
 */
export class Informer<T extends KubeObject = KubeObject> implements EventSource<T> {
  readonly name: string;
  readonly type: ResourceType;
  /** The informer's cache: frozen objects, shared, never copied. */
  readonly cache: CacheReader<T>;
  readonly #o: ResolvedInformerOptions<T>;
  readonly #writer: CacheWriter<T>;
  readonly #dispatcher: Dispatcher<T>;
  readonly #counters: InformerCounters = newCounters();
  readonly #log: Logger;
  readonly #reflector: Reflector<T>;
  readonly #check: ObjectCheck;
  /** Metadata-only informers: reduces what a backend sent beyond metadata (none should). */
  readonly #project: ((object: T) => T) | undefined;
  /** Metadata-only informers: shares what cached objects' metadata repeat (see {@link MetadataInterner}). */
  readonly #interner: MetadataInterner | undefined;
  #hooks: InformerMetrics | undefined;
  #emitting: Promise<unknown> = Promise.resolve();
  #started = false;
  /** The last failed list's error (cleared by the next complete list). */
  #listFailure: { readonly error: unknown } | undefined;
  readonly #listFailureWaiters = new Set<(error: unknown) => void>();

  constructor(options: InformerOptions<T>) {
    this.#o = resolveInformerOptions(options);
    this.name = this.#o.name;
    this.type = this.#o.type;
    this.#log = this.#o.logger.child({ informer: this.name });
    this.#check = objectCheck(this.#o.type, this.#o.namespace);
    this.#project = this.#o.metadataOnly
      ? (metadataProjection(this.#o.type) as unknown as (object: T) => T)
      : undefined;
    this.#interner = this.#o.metadataOnly ? new MetadataInterner() : undefined;
    const { reader, writer } = createCache<T>({ name: this.name, logger: this.#log });
    this.cache = reader;
    this.#writer = writer;
    this.#dispatcher = new Dispatcher<T>((error, event) => {
      this.#counters.listenerErrors++;
      this.#log.error({ eventType: event.type, err: error }, 'Informer listener failed');
      reportInformerError(this.#o, this.#log, error, {
        informer: this.name,
        during: 'listener',
        eventType: event.type,
      });
    });
    this.#reflector = new Reflector(this.#o, this.#sink(), this.#counters, this.#log);
  }

  /** What it is doing now; see {@link InformerState}. */
  get state(): InformerState {
    return this.#reflector.state;
  }

  /** The resourceVersion a watch resumes from: the last list's, advanced by every event and bookmark. */
  get lastSyncResourceVersion(): string {
    return this.#reflector.lastSeenResourceVersion;
  }

  /**
   * When the resourceVersion it has seen last advanced (a watch event, a bookmark or a list), in
   * clock milliseconds: how fresh the cache is known to be. Timed only once `observe` was called
   * (NaN until then, and until the next advance).
   */
  get resourceVersionSeenAt(): number {
    return this.#reflector.lastSeenAt;
  }

  /** Adds metric hooks (list durations and reasons, watch restarts); they run after earlier ones. */
  observe(hooks: InformerMetrics): void {
    if (typeof hooks !== 'object' || hooks === null) throw new OptionsError('hooks', hooks, 'an object');
    this.#hooks = joinHooks(this.#hooks, hooks);
    this.#reflector.observe(this.#hooks);
  }

  /**
   * Registers a listener. It first gets one `create` (`isInInitialList: true`) per cached object,
   * synchronously, then every later event. Returns an idempotent unsubscribe.
   */
  subscribe(listener: (event: ObjectEvent<T>) => void): () => void {
    return this.#dispatcher.subscribe(listener, this.#replay());
  }

  /** Runs until `signal` aborts, then resolves. Rejects only when called a second time. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(`informer ${this.name}`);
    this.#started = true;
    try {
      if (signal.aborted) return;
      const resync = this.#resyncLoop(signal);
      await this.#reflector.run(signal);
      await resync;
    } finally {
      this.#writer.close();
    }
  }

  /**
   * Resolves once the initial list is cached and delivered; rejects if the informer stops first or
   * `signal` aborts. With `failOn`, it also rejects with a list's error when `failOn(error)` holds:
   * at once when the last list before sync failed so, else when the next one does. The informer
   * goes on retrying (a later RBAC grant or CRD install still syncs it); only this wait gives up.
   * A cached client read uses it so that a 403 on the list fails the read instead of hanging it.
   */
  waitForSync(signal: AbortSignal, options: WaitForSyncOptions = {}): Promise<void> {
    const failOn = options.failOn;
    if (failOn === undefined || this.cache.hasSynced()) return this.cache.waitForSync(signal);
    const last = this.#listFailure;
    if (last !== undefined && failOn(last.error)) return Promise.reject(asError(last.error));
    return new Promise<void>((resolve, reject) => {
      // The cache's waiter must leave with this wait (not linger until sync or `signal`).
      const local = new AbortController();
      const onAbort = (): void => local.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.#listFailureWaiters.delete(onFailure);
        local.abort();
      };
      const onFailure = (error: unknown): void => {
        if (!failOn(error)) return;
        settle();
        reject(asError(error));
      };
      this.#listFailureWaiters.add(onFailure);
      if (signal.aborted) onAbort();
      this.cache.waitForSync(local.signal).then(
        () => {
          settle();
          resolve();
        },
        (error: unknown) => {
          settle();
          reject(asError(error));
        },
      );
    });
  }

  /**
   * The error of the last list, while the informer has not synced and is backing off before the
   * next: what keeps it from syncing. `undefined` once synced, and before any list failed.
   */
  get listFailure(): unknown {
    return this.cache.hasSynced() ? undefined : this.#listFailure?.error;
  }

  hasSynced(): boolean {
    return this.cache.hasSynced();
  }

  /** Adds a custom index to the cache (see `CacheWriter.indexField`). */
  indexField(name: string, fn: IndexFunc<T>): void {
    this.#writer.indexField(name, fn);
  }

  stats(): InformerStats {
    return { ...this.#counters };
  }

  #sink(): ReflectorSink<T> {
    return {
      stage: () => this.#writer.stage(),
      stageItem: (stage, item) => this.#stageItem(stage, item),
      commit: (stage, resourceVersion, signal) => this.#commit(stage, resourceVersion, signal),
      apply: (event) => this.#apply(event),
      listFailed: (error) => {
        this.#listFailure = { error };
        for (const waiter of [...this.#listFailureWaiters]) waiter(error);
      },
    };
  }

  #stageItem(stage: CacheStage<T>, item: unknown): void {
    const problem = this.#check(item);
    if (problem !== undefined) {
      this.#counters.malformed++;
      this.#log.warn(
        { err: new MalformedEventError(this.name, 'list', problem) },
        'Skipped a malformed list item',
      );
      return;
    }
    stage.add(this.#transform(item as T));
  }

  async #commit(stage: CacheStage<T>, resourceVersion: string, signal: AbortSignal): Promise<void> {
    const initial = !this.cache.hasSynced();
    const result = stage.commit(resourceVersion);
    this.#listFailure = undefined;
    const targets = this.#dispatcher.snapshot();
    const shard = this.#reflector.shard;
    await this.#exclusive(() =>
      this.#dispatcher.emitBatch(targets, listEvents(result, initial, shard), signal),
    );
    if (initial && !signal.aborted) this.#writer.markSynced();
  }

  #apply(event: WatchEvent<T>): void {
    if (event.type === 'BOOKMARK') {
      this.#writer.apply(event);
      return;
    }
    const change = this.#writer.apply({ type: event.type, object: this.#transform(event.object) });
    switch (change.type) {
      case 'created':
        this.#dispatcher.emit({ type: 'create', object: change.object });
        break;
      case 'updated':
        this.#dispatcher.emit({ type: 'update', oldObject: change.oldObject, object: change.object });
        break;
      case 'deleted':
        this.#dispatcher.emit(
          event.type === 'DELETED' && event.purged === true
            ? { type: 'delete', object: change.object, purged: true }
            : { type: 'delete', object: change.object },
        );
        break;
      case 'unchanged':
        break;
    }
  }

  /**
   * The transformed object. When the transform throws or returns something that is not a valid
   * object of this kind, the failure is logged and the object is cached as it came: the transform
   * only saves memory, and a cache missing objects would be worse.
   */
  #transform(given: T): T {
    const object = this.#project === undefined ? given : this.#project(given);
    let result: T;
    try {
      result = this.#o.transform(object);
    } catch (error) {
      this.#transformFailed(error);
      return this.#intern(object);
    }
    if (result === object) return this.#intern(result);
    const problem = this.#check(result);
    if (problem === undefined) return this.#intern(result);
    this.#transformFailed(new MalformedEventError(this.name, 'transform', problem));
    return this.#intern(object);
  }

  /** `object` with its metadata's repeated values shared (metadata-only informers); it only saves memory. */
  #intern(object: T): T {
    if (this.#interner === undefined) return object;
    try {
      this.#interner.intern(object.metadata);
    } catch {
      // Metadata that refuses a write (a non-writable property) is cached as it is.
    }
    return object;
  }

  #transformFailed(cause: unknown): void {
    this.#counters.transformErrors++;
    this.#log.error({ err: new TransformFailedError(this.name, { cause }) }, 'Informer transform failed');
  }

  *#replay(): Generator<ObjectEvent<T>, void, undefined> {
    for (const object of this.cache.list()) yield { type: 'create', object, isInInitialList: true };
  }

  async #resyncLoop(signal: AbortSignal): Promise<void> {
    const { resyncPeriodMs, clock } = this.#o;
    if (resyncPeriodMs === 0) return;
    try {
      await this.cache.waitForSync(signal);
      for (;;) {
        await clock.sleep(resyncPeriodMs, signal);
        await this.#exclusive(async () => {
          const targets = this.#dispatcher.snapshot();
          if (targets.length === 0) return;
          this.#counters.resyncs++;
          await this.#dispatcher.emitBatch(targets, resyncEvents(this.cache), signal);
        });
      }
    } catch {
      // Stopped (the signal aborted, or the informer stopped before it synced).
    }
  }

  /** Runs batches (a relist's events, a resync) one after the other, never interleaved. */
  #exclusive<R>(batch: () => Promise<R>): Promise<R> {
    const run = this.#emitting.then(batch);
    this.#emitting = run.catch(() => undefined);
    return run;
  }
}

/**
 * A relist's events: vanished objects (tombstones), changed ones, new ones. With a `shard`, a
 * vanished object outside it left the shard (the scope changed) and is dropped without an event.
 */
function* listEvents<T extends KubeObject>(
  result: ReplaceResult<T>,
  initial: boolean,
  shard: ShardSelectorExpr | undefined,
): Generator<ObjectEvent<T>, void, undefined> {
  for (const object of result.deleted) {
    if (shard === undefined || shard.matches(object))
      yield { type: 'delete', object, finalStateUnknown: true };
  }
  for (const { oldObject, object } of result.updated) yield { type: 'update', oldObject, object };
  for (const object of result.created)
    yield initial ? { type: 'create', object, isInInitialList: true } : { type: 'create', object };
}

/** A resync: every object cached when it starts and still cached unchanged when its turn comes. */
function* resyncEvents<T extends KubeObject>(
  cache: CacheReader<T>,
): Generator<ObjectEvent<T>, void, undefined> {
  for (const object of cache.list()) {
    const key = { namespace: object.metadata.namespace ?? '', name: object.metadata.name as string };
    if (cache.get(key) === object) yield { type: 'update', oldObject: object, object, isResync: true };
  }
}

/** What a wait rejects with: the error itself, or an Error describing a thrown non-Error. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
