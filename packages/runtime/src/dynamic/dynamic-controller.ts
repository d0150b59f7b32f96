import { type Backend, type ResourceType, resourceType } from '../backend/index.ts';
import type { CacheReader } from '../cache/index.ts';
import type { WriteLedger } from '../client/index.ts';
import { type Clock, realClock, settlesWithin, type Timer } from '../clock/index.ts';
import {
  Controller,
  type ControllerKeyInfo,
  type ControllerMetrics,
  type ControllerQueue,
  type ReconcileInterceptor,
  ShutdownTimeoutError,
  SourceSyncError,
} from '../controller/index.ts';
import { AbortedError, AlreadyStartedError, OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { causeObjectOf, eventCause } from '../handler/index.ts';
import { type InformerHandle, InformerRegistry } from '../informer/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { durationMs, integer, nonEmptyString, syncTimeoutMs } from '../options.ts';
import { generationChanged } from '../predicate/index.ts';
import { done, type ReconcileContext, type ReconcileReturn, toError } from '../reconcile/index.ts';
import { linkSignals, type Runnable, scopedSignal } from '../runnable/index.ts';
import type { ShardGate } from '../sharding/index.ts';
import { RemoteWriters } from '../source/index.ts';
import {
  type Cause,
  joinHooks,
  maxRetries as maxRetriesPolicy,
  type RateLimiter,
  type RetryPolicy,
  unlimitedRetries,
  type WorkQueueMetrics,
  type WorkQueueStats,
} from '../workqueue/index.ts';
import { ControllerShutDownError, KindStoppedError, ResourceNotServedError } from './errors.ts';
import {
  type GroupVersionResource,
  gvrOf,
  type KindHandler,
  type KindReconciler,
  type KindRequest,
  kindId,
  type ServeOptions,
  type ServesKinds,
} from './types.ts';

/** Hooks a metrics adapter implements to observe a dynamic controller (kro's `dynamic_controller_*`). */
export interface DynamicControllerMetrics extends ControllerMetrics {
  /** The number of served kinds changed. */
  onKinds?(controller: string, count: number): void;
  /** A newly served kind's cache synced after `durationMs`. */
  onKindSynced?(controller: string, kind: string, durationMs: number): void;
  /** An informer event of `kind` was seen; `enqueued` is false when the generation filter dropped it. */
  onEvent?(controller: string, kind: string, type: ObjectEvent<unknown>['type'], enqueued: boolean): void;
}

export interface DynamicControllerOptions {
  /** Name for logs and metrics. Default 'dynamic-controller'. */
  readonly name?: string;
  /** Where the served kinds live. Required. */
  readonly backend: Backend;
  /**
   * Shared informers to take the kinds' informers from (a manager's `informers`, so that they may
   * start before leadership). Default: the controller's own registry, started with it.
   */
  readonly informers?: InformerRegistry;
  /** Reconciles at once over all kinds (kro's `Workers`). Default 1. */
  readonly workers?: number;
  /**
   * Every this many milliseconds every cached object of every served kind is reconciled again.
   * Default 0 (never). Unlike kro, whose resyncs are dropped by its generation filter, these run.
   */
  readonly resyncPeriodMs?: number;
  /**
   * Drop a request after this many retries, counted as kro's `QueueMaxRetries` (a request that
   * always fails runs `1 + maxRetries` times). Default: retry forever. Exclusive with `retryPolicy`.
   */
  readonly maxRetries?: number;
  /** What to do after a retryable error. Default `unlimitedRetries`. Exclusive with `maxRetries`. */
  readonly retryPolicy?: RetryPolicy;
  /**
   * Backoff of retried requests. Default controller-runtime's: exponential 5 ms → 1000 s per
   * request, and at least what an overall token bucket (10 per second, burst 100) allows.
   */
  readonly rateLimiter?: RateLimiter;
  /**
   * How long stopping the controller, or one kind, waits for its in-flight reconciles. Default
   * 30 000; 0 does not wait.
   */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long a newly served kind may take to sync before `serve` rejects. Default 120 000;
   * `Infinity` waits for as long as it takes.
   */
  readonly syncTimeoutMs?: number;
  /** Per-reconcile timeout. Default 600 000; 0 disables it. */
  readonly reconcileTimeoutMs?: number;
  /**
   * Drop updates whose `metadata.generation` did not change (status-only and metadata-only writes),
   * as kro does. Kinds without generations (0 or none) are never filtered. Default true; a kind's
   * `ServeOptions` may override it.
   */
  readonly filterUnchangedGeneration?: boolean;
  /** Whether a manager runs it only while leading. Default true; false with `sharding`. */
  readonly needLeaderElection?: boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly metrics?: DynamicControllerMetrics;
  readonly queueMetrics?: WorkQueueMetrics;
  /** As `ControllerOptions.writeLedger` (a manager passes its own). Default: one of its own. */
  readonly writeLedger?: WriteLedger;
  /**
   * Asked who, in another process, wrote the object of each live event (see `RemoteWriters`; a
   * manager passes its `remoteWriters`). Default: none.
   */
  readonly remoteWriters?: RemoteWriters;
  /**
   * Reconcile only the requests this replica's shard member may run (see `ControllerSharding`):
   * requests are sharded by kind, namespace and name, and when the member gains keys the cached
   * objects of every served kind that it now owns are enqueued. Default: all (no sharding).
   */
  readonly sharding?: { readonly member: ShardGate };
  /** Called with every reconcile error, retried or not. Must not throw. */
  readonly onError?: (error: Error, request: KindRequest) => void;
  /**
   * Called once a kind stopped being served (by `stopServing`, a failed sync or the controller
   * stopping), for what else holds on to the kind (a manager drops its cached reader). Must not throw.
   */
  readonly onKindStopped?: (type: ResourceType) => void;
}

/** The states of a dynamic controller, in order. */
export type DynamicControllerState = 'new' | 'running' | 'stopping' | 'stopped';

/** One served kind. */
interface Served {
  readonly id: string;
  /** The latest type served under this id (a CRD may change facts such as its status subresource). */
  type: ResourceType;
  readonly gvr: GroupVersionResource;
  handler: KindReconciler;
  filter: boolean;
  watch: WatchSpec;
  handle: InformerHandle;
  unsubscribe: () => void;
  /** Aborts when the kind stops being served. */
  readonly stop: AbortController;
  /** In-flight reconciles, by request key. */
  readonly running: Map<Promise<ReconcileReturn>, string>;
  resync: Timer | undefined;
  synced: Promise<void> | undefined;
}

interface WatchSpec {
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  readonly metadataOnly: boolean;
}

/**
 * One controller for many kinds, served and stopped while it runs (kro's dynamic controller).
 *
 * All kinds share one work queue and one pool of `workers`. The queue is fair between kinds:
 * ready requests are taken round-robin across kinds, so a storm of events on one kind delays a
 * request of another kind by at most one request per busy kind; a kind can be held to fewer
 * workers with `maxConcurrent`. A request carries its kind, so the same namespace/name in two
 * kinds are two requests; one request is never reconciled twice at once.
 *
 * - `serve(type, handler)`: a new kind's informer starts (taken from the shared registry); once
 *   the controller runs, `serve` resolves after the kind's cache synced, every existing object
 *   being enqueued. Serving a served kind again replaces its type (same group, version and
 *   resource), handler and options and enqueues every cached object again. Before `start`, `serve`
 *   only registers the kind: `start` waits for every registered kind to sync before the workers
 *   start.
 * - `stopServing(kind)`: the kind's informer is released (its watch closes when no one else
 *   shares it), its resync timer is cancelled, its queued and waiting requests are dropped at
 *   once, and its in-flight reconciles see their signal abort with a {@link KindStoppedError};
 *   their results are ignored. Resolves once they finished (or rejects with a
 *   `ShutdownTimeoutError` after `shutdownTimeoutMs`, the kind being stopped all the same). After it
 *   resolves, no reconcile of that kind starts. Stopping a kind that is not served resolves.
 * - Updates whose generation did not change are dropped by default (kro), so status writes do not
 *   reconcile; `filterUnchangedGeneration: false` turns that off.
 * - `start(signal)` runs once; stopping drops queued requests, aborts in-flight reconciles' signals
 *   and waits up to `shutdownTimeoutMs` for them.
 *
 * @example
 * const dynamic = new DynamicController({ backend, workers: 4 });
 * void dynamic.start(signal);
 * await dynamic.serve(widgetType, async ({ namespace, name }, { cache }) => {
 *   const widget = cache.get({ namespace, name });
 *   if (widget === undefined) return done();
 *   await converge(widget);
 *   return done();
 * });
 * await dynamic.stopServing(widgetType);
 */
export class DynamicController implements Runnable, ServesKinds {
  readonly name: string;
  readonly needLeaderElection: boolean;
  /** Whether it reconciles only what its shard member may run (the `sharding` option). */
  readonly sharded: boolean;
  readonly #backend: Backend;
  readonly #registry: InformerRegistry;
  readonly #ownRegistry: boolean;
  readonly #resyncPeriodMs: number;
  readonly #shutdownTimeoutMs: number;
  readonly #syncTimeoutMs: number;
  readonly #filter: boolean;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #metrics: DynamicControllerMetrics | undefined;
  readonly #onKindStopped: ((type: ResourceType) => void) | undefined;
  readonly #controller: Controller<KindRequest>;
  readonly #kinds = new Map<string, Served>();
  readonly #stop = new AbortController();
  readonly #changedGeneration = generationChanged<KubeObject>();
  readonly #remoteWriters: RemoteWriters | undefined;
  #state: DynamicControllerState = 'new';

  constructor(options: DynamicControllerOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    this.name = nonEmptyString('name', options.name, 'dynamic-controller');
    if (this.name === '') throw new OptionsError('name', options.name, 'a non-empty string');
    const backend = options.backend as unknown;
    if (typeof backend !== 'object' || backend === null || typeof (backend as Backend).watch !== 'function') {
      throw new OptionsError('backend', backend, 'a Backend');
    }
    this.#backend = options.backend;
    // Duck-typed: a registry from a duplicate install of the package is still a registry.
    if (
      options.informers !== undefined &&
      typeof (options.informers as Partial<InformerRegistry>).acquire !== 'function'
    ) {
      throw new OptionsError('informers', options.informers, 'an InformerRegistry');
    }
    this.#clock = options.clock ?? realClock;
    this.#logger = (options.logger ?? noopLogger).child({ controller: this.name });
    this.#ownRegistry = options.informers === undefined;
    this.#registry =
      options.informers ?? new InformerRegistry({ clock: this.#clock, logger: options.logger ?? noopLogger });
    this.#resyncPeriodMs = durationMs('resyncPeriodMs', options.resyncPeriodMs, 0);
    this.#shutdownTimeoutMs = durationMs('shutdownTimeoutMs', options.shutdownTimeoutMs, 30_000);
    this.#syncTimeoutMs = syncTimeoutMs('syncTimeoutMs', options.syncTimeoutMs, 120_000);
    this.#filter = booleanOption('filterUnchangedGeneration', options.filterUnchangedGeneration, true);
    this.needLeaderElection = booleanOption(
      'needLeaderElection',
      options.needLeaderElection,
      options.sharding === undefined,
    );
    this.sharded = options.sharding !== undefined;
    this.#metrics = options.metrics;
    this.#onKindStopped = options.onKindStopped;
    const remote = options.remoteWriters;
    if (remote !== undefined && !(remote instanceof RemoteWriters))
      throw new OptionsError('remoteWriters', remote, 'a RemoteWriters');
    this.#remoteWriters = remote;
    if (options.maxRetries !== undefined && options.retryPolicy !== undefined) {
      throw new OptionsError('maxRetries', options.maxRetries, 'to be left out when retryPolicy is given');
    }
    const retryPolicy =
      options.maxRetries === undefined
        ? (options.retryPolicy ?? unlimitedRetries)
        : maxRetriesPolicy(options.maxRetries);
    const router: KindReconciler = { reconcile: (request, context) => this.#route(request, context) };
    this.#controller = new Controller<KindRequest>({
      name: this.name,
      reconciler: router,
      maxConcurrentReconciles: integer('workers', options.workers, 1, 1),
      keyOf: requestKey,
      partitionOf: requestKind,
      kindOf: requestKind,
      retryPolicy,
      shutdownTimeoutMs: this.#shutdownTimeoutMs,
      needLeaderElection: this.needLeaderElection,
      clock: this.#clock,
      logger: options.logger ?? noopLogger,
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
      ...(options.reconcileTimeoutMs === undefined ? {} : { reconcileTimeoutMs: options.reconcileTimeoutMs }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(options.queueMetrics === undefined ? {} : { queueMetrics: options.queueMetrics }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
      ...(options.writeLedger === undefined ? {} : { writeLedger: options.writeLedger }),
      ...(options.sharding === undefined
        ? {}
        : { sharding: { member: options.sharding.member, requests: () => this.#cachedRequests() } }),
    });
  }

  /** Every cached object of every served kind, as a request. */
  *#cachedRequests(): Iterable<KindRequest> {
    for (const served of this.#kinds.values()) {
      for (const key of served.handle.informer.cache.keys()) {
        yield { kind: served.gvr, namespace: key.namespace, name: key.name };
      }
    }
  }

  get state(): DynamicControllerState {
    return this.#state;
  }

  /** The shared queue: enqueue a request of a served kind from anywhere, ask what it holds. */
  get queue(): ControllerQueue<KindRequest> {
    return this.#controller.queue;
  }

  /** The kinds served now, in the order they were first served. */
  served(): ResourceType[] {
    return [...this.#kinds.values()].map((served) => served.type);
  }

  /** The informer cache of a served kind, or undefined. */
  cache(kind: GroupVersionResource | ResourceType): CacheReader<KubeObject> | undefined {
    return this.#kinds.get(kindId(kind))?.handle.informer.cache;
  }

  /** True when every served kind's cache has synced (kro's `AllInformerHaveSynced`). */
  allSynced(): boolean {
    for (const served of this.#kinds.values()) if (!served.handle.informer.hasSynced()) return false;
    return true;
  }

  /**
   * Resolves once every kind served now has synced; a kind stopped meanwhile is not waited for.
   * Rejects with an AbortedError when `signal` aborts first.
   */
  async waitForSync(signal: AbortSignal): Promise<void> {
    const kinds = [...this.#kinds.values()];
    await Promise.all(
      kinds.map(async (served) => {
        const linked = linkSignals(signal, served.stop.signal);
        try {
          await served.handle.informer.waitForSync(linked.signal);
        } catch (error) {
          if (signal.aborted || !served.stop.signal.aborted) throw error;
        } finally {
          linked.dispose();
        }
      }),
    );
  }

  /** Reconciles run at once at most, over all kinds (`workers`). */
  get maxConcurrentReconciles(): number {
    return this.#controller.maxConcurrentReconciles;
  }

  /**
   * Adds metric hooks after construction (an adapter instrumenting a built controller); they run
   * after those given in the options. Reconcile hooks get the request's kind (`group/version/resource`).
   */
  observe(hooks: {
    readonly metrics?: DynamicControllerMetrics;
    readonly queueMetrics?: WorkQueueMetrics;
    /** Around each reconcile of the shared controller; its info carries the request's kind. */
    readonly interceptor?: ReconcileInterceptor;
  }): void {
    if (typeof hooks !== 'object' || hooks === null) throw new OptionsError('hooks', hooks, 'an object');
    if (hooks.metrics !== undefined) this.#metrics = joinHooks(this.#metrics, hooks.metrics);
    this.#controller.observe(hooks);
  }

  /** The shared queue's gauges read on demand (see `Controller.queueGauges`). */
  queueGauges(): ReturnType<Controller<KindRequest>['queueGauges']> {
    return this.#controller.queueGauges();
  }

  /** Every request held, over all kinds (see `Controller.inspect`); `partition` is the kind. */
  inspect(limit?: number): ControllerKeyInfo<KindRequest>[] {
    return this.#controller.inspect(limit);
  }

  /** Keys flagged as hot loops now (see `Controller.hotLoopKeys`). */
  hotLoopKeys(): number {
    return this.#controller.hotLoopKeys();
  }

  /** Queue counters, reconciles running and kinds served. */
  stats(): WorkQueueStats & { readonly running: number; readonly kinds: number } {
    return { ...this.#controller.stats(), kinds: this.#kinds.size };
  }

  /**
   * Serves `type` with `handler` (see {@link ServesKinds.serve}). Besides a `ResourceType`, a bare
   * GroupVersionResource (`{ group, version, resource }`, as kro names a kind) is resolved through
   * the backend's discovery first (`Backend.findResource`; a Kubernetes API server's is refreshed
   * on a miss); one the backend does not serve rejects with a {@link ResourceNotServedError}.
   */
  async serve<T extends KubeObject = KubeObject>(
    type: ResourceType<T> | GroupVersionResource,
    handler: KindHandler,
    options: ServeOptions = {},
  ): Promise<void> {
    const checked = isGroupVersionResource(type)
      ? await this.#discovered(type)
      : (resourceType(type as ResourceType) as ResourceType);
    const reconciler = handlerOption(handler);
    const opts = serveOptions(options);
    if (this.#state === 'stopping' || this.#state === 'stopped') {
      throw new ControllerShutDownError(`dynamic controller ${this.name}`);
    }
    const id = kindId(checked);
    const filter = opts.filterUnchangedGeneration ?? this.#filter;
    const watch: WatchSpec = {
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      metadataOnly: opts.metadataOnly === true,
    };
    let served = this.#kinds.get(id);
    if (served !== undefined) {
      served.type = checked;
      served.handler = reconciler;
      served.filter = filter;
      this.#controller.setPartitionLimit(id, opts.maxConcurrent);
      if (
        served.watch.namespace !== watch.namespace ||
        served.watch.labelSelector !== watch.labelSelector ||
        served.watch.metadataOnly !== watch.metadataOnly
      ) {
        this.#rewatch(served, watch);
      }
      this.#logger.info({ kind: id }, 'Kind served again; its handler is replaced and its objects enqueued');
      this.#enqueueAll(served);
    } else {
      const handle = this.#acquire(checked, watch);
      served = {
        id,
        type: checked,
        gvr: Object.freeze(gvrOf(checked)),
        handler: reconciler,
        filter,
        watch,
        handle,
        unsubscribe: () => undefined,
        stop: new AbortController(),
        running: new Map(),
        resync: undefined,
        synced: undefined,
      };
      this.#kinds.set(id, served);
      this.#controller.setPartitionLimit(id, opts.maxConcurrent);
      served.unsubscribe = handle.informer.subscribe(this.#listener(served));
      this.#logger.info({ kind: id }, 'Serving kind');
      this.#hook(() => this.#metrics?.onKinds?.(this.name, this.#kinds.size));
    }
    if (this.#state === 'running') await this.#sync(served);
  }

  async stopServing(kind: GroupVersionResource | ResourceType): Promise<void> {
    if (typeof kind !== 'object' || kind === null)
      throw new OptionsError('kind', kind, 'a GroupVersionResource or ResourceType');
    const id = kindId(kind);
    const served = this.#kinds.get(id);
    if (served === undefined) return;
    this.#retire(served);
    const dropped = this.#controller.removeWhere((request) => requestKind(request) === id);
    this.#logger.info({ kind: id, dropped, running: served.running.size }, 'Stopped serving kind');
    this.#hook(() => this.#metrics?.onKinds?.(this.name, this.#kinds.size));
    await this.#drain(served);
  }

  /** Runs the controller until `signal` aborts. Starts once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new AlreadyStartedError(`dynamic controller ${this.name}`);
    this.#state = 'running';
    const stop = this.#stop.signal;
    const onAbort = (): void => this.#stop.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const registry = this.#ownRegistry ? this.#registry.start(stop) : undefined;
    let failure: Error | undefined;
    try {
      try {
        await Promise.all([...this.#kinds.values()].map((served) => this.#sync(served)));
      } catch (error) {
        if (!stop.aborted) {
          failure = toError(error);
          this.#stop.abort(error);
        }
      }
      if (!stop.aborted) await this.#controller.start(stop);
    } catch (error) {
      failure ??= toError(error);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#state = 'stopping';
      for (const served of [...this.#kinds.values()]) this.#retire(served);
      this.#hook(() => this.#metrics?.onKinds?.(this.name, 0));
      await registry;
      this.#state = 'stopped';
    }
    if (failure !== undefined) throw failure;
  }

  /** Stops the controller as if its start signal aborted. */
  stop(): void {
    this.#stop.abort(new Error(`dynamic controller ${this.name} stopped`));
  }

  #acquire(type: ResourceType, watch: WatchSpec): InformerHandle {
    return this.#registry.acquire({
      backend: this.#backend,
      type,
      ...(watch.namespace === undefined ? {} : { namespace: watch.namespace }),
      ...(watch.labelSelector === undefined ? {} : { labelSelector: watch.labelSelector }),
      ...(watch.metadataOnly ? { metadataOnly: true } : {}),
    });
  }

  /** Moves a served kind to another informer (its namespace, selector or metadata-only mode changed). */
  #rewatch(served: Served, watch: WatchSpec): void {
    const previous = served.handle;
    served.unsubscribe();
    served.handle = this.#acquire(served.type, watch);
    served.watch = watch;
    served.synced = undefined;
    served.unsubscribe = served.handle.informer.subscribe(this.#listener(served));
    previous.release();
  }

  #listener(served: Served): (event: ObjectEvent<KubeObject>) => void {
    const queue = this.#controller.queue;
    return (event) => {
      if (served.stop.signal.aborted) return;
      const enqueued = !(served.filter && !this.#changedGeneration(event));
      this.#hook(() => this.#metrics?.onEvent?.(this.name, served.id, event.type, enqueued));
      if (!enqueued) return;
      const cause = eventCause(event, { source: served.id });
      const writer = this.#remoteWriters?.echoWriterOf(event);
      queue.add(requestOf(served, event.object), {
        cause: writer === undefined ? cause : Object.freeze({ ...cause, writtenBy: writer }),
      });
    };
  }

  #enqueueAll(served: Served): void {
    const queue = this.#controller.queue;
    for (const object of served.handle.informer.cache.list()) {
      const object_ = causeObjectOf(object);
      const cause: Cause = {
        type: 'resync',
        source: served.id,
        ...(object_ === undefined ? {} : { object: object_ }),
      };
      queue.add(requestOf(served, object), { cause });
    }
  }

  /** The type of a bare GroupVersionResource, from the backend's discovery. */
  async #discovered(gvr: GroupVersionResource): Promise<ResourceType> {
    for (const field of ['group', 'version', 'resource'] as const) {
      if (typeof gvr[field] !== 'string') throw new OptionsError(`type.${field}`, gvr[field], 'a string');
    }
    if (gvr.version === '' || gvr.resource === '')
      throw new OptionsError('type', gvr, 'a GroupVersionResource with a version and a resource');
    const id = kindId(gvr);
    const find = this.#backend.findResource;
    if (typeof find !== 'function')
      throw new ResourceNotServedError(id, this.#backend.name, 'the backend has no discovery to resolve it');
    const found = await find.call(this.#backend, gvr, this.#stop.signal);
    if (found === undefined)
      throw new ResourceNotServedError(id, this.#backend.name, 'the backend does not serve it');
    return found;
  }

  /** Waits for a kind's cache to sync (once per informer), then arms its resync timer. */
  #sync(served: Served): Promise<void> {
    served.synced ??= this.#waitForKind(served);
    return served.synced;
  }

  async #waitForKind(served: Served): Promise<void> {
    const started = this.#clock.now();
    let timedOut = false;
    const linked = scopedSignal(
      this.#clock,
      [this.#stop.signal, served.stop.signal],
      this.#syncTimeoutMs,
      () => {
        timedOut = true;
      },
    );
    try {
      await served.handle.informer.waitForSync(linked.signal);
    } catch (error) {
      if (served.stop.signal.aborted) throw served.stop.signal.reason;
      if (this.#stop.signal.aborted) {
        throw new AbortedError(`dynamic controller ${this.name} stopped while ${served.id} synced`, {
          cause: error,
        });
      }
      const failure = new SourceSyncError(
        `dynamic controller ${this.name}`,
        served.id,
        timedOut ? `did not sync within ${this.#syncTimeoutMs}ms` : 'failed to sync',
        { cause: error },
      );
      if (this.#kinds.get(served.id) === served) {
        this.#retire(served);
        this.#controller.removeWhere((request) => requestKind(request) === served.id);
        this.#hook(() => this.#metrics?.onKinds?.(this.name, this.#kinds.size));
      }
      this.#logger.error({ kind: served.id, err: failure }, 'Kind did not sync; it is not served');
      throw failure;
    } finally {
      linked.dispose();
    }
    const duration = this.#clock.now() - started;
    this.#hook(() => this.#metrics?.onKindSynced?.(this.name, served.id, duration));
    this.#armResync(served);
  }

  #armResync(served: Served): void {
    if (this.#resyncPeriodMs === 0 || served.stop.signal.aborted || served.resync !== undefined) return;
    const tick = (): void => {
      served.resync = undefined;
      if (served.stop.signal.aborted) return;
      this.#enqueueAll(served);
      served.resync = this.#clock.setTimer(tick, this.#resyncPeriodMs);
    };
    served.resync = this.#clock.setTimer(tick, this.#resyncPeriodMs);
  }

  /** Takes a kind out of service: no events, no timer, no informer, in-flight signals aborted. */
  #retire(served: Served): void {
    if (this.#kinds.get(served.id) === served) this.#kinds.delete(served.id);
    served.unsubscribe();
    served.resync?.cancel();
    served.resync = undefined;
    served.handle.release();
    this.#controller.setPartitionLimit(served.id, undefined);
    if (served.stop.signal.aborted) return;
    served.stop.abort(new KindStoppedError(served.id));
    const onKindStopped = this.#onKindStopped;
    if (onKindStopped !== undefined) this.#hook(() => onKindStopped(served.type));
  }

  /** Waits for a stopped kind's in-flight reconciles, up to `shutdownTimeoutMs`. */
  async #drain(served: Served): Promise<void> {
    if (served.running.size === 0 || this.#shutdownTimeoutMs === 0) return;
    const timedOut = !(await settlesWithin(
      this.#clock,
      Promise.allSettled(served.running.keys()),
      this.#shutdownTimeoutMs,
    ));
    if (timedOut) {
      throw new ShutdownTimeoutError(`kind ${served.id}`, this.#shutdownTimeoutMs, [
        ...served.running.values(),
      ]);
    }
  }

  async #route(request: KindRequest, context: ReconcileContext): Promise<ReconcileReturn> {
    const served = this.#kinds.get(requestKind(request));
    if (served === undefined) {
      // Queued before its kind stopped and not removed (kro v0.6+: dropped, never retried).
      context.logger.info({ kind: requestKind(request) }, 'Kind no longer served; request dropped');
      return done();
    }
    const linked = linkSignals(context.signal, served.stop.signal);
    const call = (async () =>
      served.handler.reconcile(request, {
        ...context,
        signal: linked.signal,
        type: served.type,
        cache: served.handle.informer.cache,
      }))();
    served.running.set(call, requestKey(request));
    try {
      const result = await call;
      return served.stop.signal.aborted ? done() : result;
    } catch (error) {
      // A stopped kind's reconcile is over, whatever it says: nothing of that kind is retried.
      if (served.stop.signal.aborted) return done();
      throw error;
    } finally {
      served.running.delete(call);
      linked.dispose();
    }
  }

  #hook(call: () => void): void {
    try {
      call();
    } catch {
      // Observers must never break the controller.
    }
  }
}

/** The request of a cached object (the informer admits only objects with a name). */
function requestOf(served: Served, object: KubeObject): KindRequest {
  return { kind: served.gvr, namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

/** The queue identity of a request: kind and namespace/name. */
function requestKey(request: KindRequest): string {
  return `${requestKind(request)}/${request.namespace}/${request.name}`;
}

/** Kind ids by kind object: the requests of one served kind share its `gvr`, so this is one lookup. */
const kindIds = new WeakMap<GroupVersionResource, string>();

function requestKind(request: KindRequest): string {
  let id = kindIds.get(request.kind);
  if (id === undefined) {
    id = kindId(request.kind);
    // Only frozen kinds are cached: a caller's mutable object could change under the cache.
    if (Object.isFrozen(request.kind)) kindIds.set(request.kind, id);
  }
  return id;
}

function handlerOption(handler: KindHandler): KindReconciler {
  const h = handler as unknown;
  if (typeof h === 'function') return { reconcile: h as KindReconciler['reconcile'] };
  if (typeof h === 'object' && h !== null && typeof (h as KindReconciler).reconcile === 'function') {
    return h as KindReconciler;
  }
  throw new OptionsError('handler', h, 'a function or an object with a reconcile method');
}

function serveOptions(options: ServeOptions): ServeOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  if (options.maxConcurrent !== undefined) integer('maxConcurrent', options.maxConcurrent, 1, 1);
  if (options.filterUnchangedGeneration !== undefined) {
    booleanOption('filterUnchangedGeneration', options.filterUnchangedGeneration, true);
  }
  if (options.namespace !== undefined && typeof options.namespace !== 'string') {
    throw new OptionsError('namespace', options.namespace, 'a string');
  }
  if (options.labelSelector !== undefined && typeof options.labelSelector !== 'string') {
    throw new OptionsError('labelSelector', options.labelSelector, 'a label selector string');
  }
  if (options.metadataOnly !== undefined) booleanOption('metadataOnly', options.metadataOnly, false);
  return options;
}

function booleanOption(field: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new OptionsError(field, value, 'a boolean');
  return value;
}

/** A bare GroupVersionResource rather than a ResourceType (which has a plural, not a resource). */
function isGroupVersionResource(type: unknown): type is GroupVersionResource {
  return typeof type === 'object' && type !== null && 'resource' in type && !('plural' in type);
}
