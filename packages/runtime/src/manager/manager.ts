import {
  type Backend,
  BackendError,
  BackendErrorCodes,
  type Fence,
  FencedError,
  ForbiddenError,
  qualifiedResource,
  type ResourceType,
  RoutedBackend,
} from '../backend/index.ts';
import { type BuilderWatchOptions, ControllerBuilder } from '../builder/index.ts';
import { KindNotServedError } from '../cache/index.ts';
import { Client, type ObjectReader, WriteLedger } from '../client/index.ts';
import { type Clock, realClock, sleepOn, type Timer } from '../clock/index.ts';
import { DynamicController, type DynamicControllerOptions } from '../dynamic/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import { type InformerErrorInfo, type InformerOptions, InformerRegistry } from '../informer/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { durationMs, func, syncProgress, syncTimeoutMs } from '../options.ts';
import { Permissions } from '../permissions/index.ts';
import { type LeaderElection, type Runnable, whenAborted } from '../runnable/index.ts';
import type { ShardMember } from '../sharding/index.ts';
import { RemoteWriters } from '../source/index.ts';
import {
  WebhookBuilder,
  type WebhookHost,
  type WebhookRegistration,
  WebhookRegistry,
} from '../webhook/index.ts';
import {
  CacheSyncTimeoutError,
  LeadershipLostError,
  ManagerShutdownTimeoutError,
  RunnableFailedError,
} from './errors.ts';
import { type Check, type CheckReport, Checks } from './health.ts';
import { RunnableGroup } from './runnable-group.ts';

/** A runnable with a cache that must be synced before controllers start (informers). */
export interface SyncingRunnable extends Runnable {
  waitForSync(signal: AbortSignal): Promise<void>;
}

/** The start order of runnables; they stop in reverse. */
export type RunnableGroupName = 'servers' | 'caches' | 'others' | 'leader';

export interface AddOptions {
  /** Name for logs. Default `runnable-<n>`. */
  readonly name?: string;
  /**
   * Group: 'servers' start first; 'caches' must sync before the rest; 'others' run on every
   * replica; 'leader' only while leading. Default: 'others' if `needLeaderElection === false`,
   * else 'leader'.
   */
  readonly group?: RunnableGroupName;
}

/** A runnable that says whether its sources synced (a {@link Controller}'s `syncStatus`). */
interface SyncReporting {
  syncStatus(): { readonly synced: boolean; readonly waitingFor: readonly string[] };
}

export interface ManagerOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** How long stopping waits for all runnables. Default 30 000. */
  readonly gracefulShutdownTimeoutMs?: number;
  /**
   * How long start waits for caches to sync before failing with a `CacheSyncTimeoutError`.
   * Default 120 000. `Infinity` waits for as long as it takes (a server down at start, a list
   * refused until RBAC is fixed): every 30 s a warning names the informers not synced and their
   * last error, and `ready()` (`/readyz`) fails saying the same.
   */
  readonly cacheSyncTimeoutMs?: number;
  /** Run 'leader' runnables only while leading. Default: none (they start at once). */
  readonly leaderElection?: LeaderElection;
  /**
   * Elastic sharding: this replica's member of a shard group. The manager runs it on every replica
   * (the 'others' group, so it hands its keys over after the controllers stopped), every controller
   * it builds reconciles only the keys the member may run (on every replica, leader election or
   * not), and client writes carry the member's fence. Default: none.
   */
  readonly sharding?: ShardMember;
  /**
   * The default backend. With one, the manager owns shared informers (`informers`, a cache
   * runnable synced before controllers start) and a cached `client` with read-your-writes.
   */
  readonly backend?: Backend;
  /**
   * More backends, by name, for the kinds that live elsewhere than the default: a host that
   * connects them (`converge dev --nats URL` gives `nats`) passes them here, and an operator module
   * routes its kinds to one with {@link Manager.useBackend} (`manager.useBackend('nats', [type])`).
   */
  readonly backends?: Readonly<Record<string, Backend>>;
  /** Field manager the client records on writes. Default 'converge'. */
  readonly fieldManager?: string;
  /**
   * How often the manager's shared informers replay every cached object to their controllers
   * (controller-runtime's `SyncPeriod`, Kumori's `resyncInterval`): each arrives as an update with
   * `isResync: true` and, with the builder's default handlers and no predicates, reconciles its
   * object (or owner) at low priority. A predicate such as `generationChanged()` drops them.
   * Default 0: no resync (controller-runtime resyncs every 10 hours by default).
   */
  readonly resyncPeriodMs?: number;
  /**
   * Told of every error the manager's shared informers recover from on their own: a failed list or
   * watch (retried after a backoff) and an event handler that threw (see
   * {@link InformerOptions.onError}; grafana app-sdk's informer `ErrorHandler`). They are logged
   * either way. Default none.
   */
  readonly onInformerError?: (error: unknown, info: InformerErrorInfo) => void;
  /**
   * Serves every webhook registered with {@link Manager.webhook} (also those completed after
   * start), and runs in the servers group on every replica (no leadership needed). Usually
   * `@converge/kube`'s `WebhookServer`. Default: none (registrations are only listed).
   */
  readonly webhookServer?: WebhookHost;
}

export type ManagerState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * Owns runnables and runs them in a fixed order: servers → caches (wait for sync) → others →
 * leader-gated runnables (once leadership is won). Everything stops in reverse order on one signal;
 * the first runnable to fail stops the rest, and `start` rejects with its error.
 *
 * @example
 * const manager = new Manager({ logger });
 * manager.add(controller);
 * await manager.start(signal);
 */
export class Manager implements Runnable {
  readonly #clock: Clock;
  /** The logger given in the options, for the parts the manager creates. */
  readonly #baseLogger: Logger;
  /** The manager's own lines (`component: manager`). */
  readonly #logger: Logger;
  readonly #gracefulShutdownTimeoutMs: number;
  readonly #cacheSyncTimeoutMs: number;
  readonly #leaderElection: LeaderElection | undefined;
  readonly #groups: Record<RunnableGroupName, RunnableGroup>;
  readonly #caches: SyncingRunnable[] = [];
  /** Runnables that say whether their sources synced (controllers), for the readiness check. */
  readonly #syncing: { readonly name: string; readonly runnable: SyncReporting }[] = [];
  readonly #health: Checks;
  readonly #ready: Checks;
  readonly #stop = new AbortController();
  readonly #election = new AbortController();
  #state: ManagerState = 'new';
  #synced = false;
  #leading = false;
  /** The fence of the leader term acquired last, announced to the backends; kept after the term ended. */
  #fence: Fence | undefined;
  readonly #sharding: ShardMember | undefined;
  #failure: Error | undefined;
  #count = 0;
  readonly #backend: RoutedBackend | undefined;
  readonly #named: ReadonlyMap<string, Backend>;
  readonly #informers: InformerRegistry;
  readonly #client: Client | undefined;
  readonly #writeLedger: WriteLedger;
  readonly #remoteWriters = new RemoteWriters();
  readonly #readers = new Map<string, ReturnType<InformerRegistry['acquire']>>();
  /** The kinds (reader ids) that are primaries of controllers sharded by uid: read by the member's share. */
  readonly #shardedKinds = new Set<string>();
  /**
   * The client's readers that have synced, by type object, full then metadata-only: a read of a
   * synced kind takes its reader at once, with no promise and no id string built (see
   * {@link Manager.#readyReader}). Emptied whenever a reader is dropped.
   */
  #readyReaders = new WeakMap<ResourceType, [ObjectReader | undefined, ObjectReader | undefined]>();
  readonly #webhooks = new WebhookRegistry();
  readonly #permissions = new Permissions();

  constructor(options: ManagerOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#baseLogger = options.logger ?? noopLogger;
    this.#logger = this.#baseLogger.child({ component: 'manager' });
    this.#gracefulShutdownTimeoutMs = durationMs(
      'gracefulShutdownTimeoutMs',
      options.gracefulShutdownTimeoutMs,
      30_000,
    );
    this.#cacheSyncTimeoutMs = syncTimeoutMs('cacheSyncTimeoutMs', options.cacheSyncTimeoutMs, 120_000);
    const sharding = options.sharding;
    if (
      sharding !== undefined &&
      (typeof sharding.mayRun !== 'function' || typeof sharding.start !== 'function')
    )
      throw new OptionsError('sharding', sharding, 'a ShardMember');
    this.#sharding = sharding;
    const election = options.leaderElection;
    if (election !== undefined && typeof election.acquire !== 'function') {
      throw new OptionsError('leaderElection', election, 'an object with an acquire(signal) method');
    }
    this.#leaderElection = election;
    const onExit = (name: string, error: unknown): void =>
      this.#fail(new RunnableFailedError(name, { cause: error }));
    this.#groups = {
      servers: new RunnableGroup('servers', this.#logger, onExit),
      caches: new RunnableGroup('caches', this.#logger, onExit),
      others: new RunnableGroup('others', this.#logger, onExit),
      leader: new RunnableGroup('leader', this.#logger, onExit),
    };
    this.#health = new Checks(this.#clock);
    this.#ready = new Checks(this.#clock);
    this.#ready.add('caches-synced', () => {
      if (this.#synced) return;
      const waiting = this.#unsyncedInformers();
      throw new Error(
        waiting.length === 0 ? 'caches are not synced' : `caches are not synced: ${waiting.join('; ')}`,
      );
    });
    this.#ready.add('controllers-synced', () => {
      const waiting: string[] = [];
      for (const { name, runnable } of this.#syncing) {
        const status = runnable.syncStatus();
        if (!status.synced && status.waitingFor.length > 0)
          waiting.push(`${name} waits for ${status.waitingFor.join(', ')}`);
      }
      if (waiting.length > 0) throw new Error(`sources are not synced: ${waiting.join('; ')}`);
    });
    const onInformerError = func('onInformerError', options.onInformerError, undefined);
    this.#informers = new InformerRegistry({
      clock: this.#clock,
      logger: this.#baseLogger,
      resyncPeriodMs: durationMs('resyncPeriodMs', options.resyncPeriodMs, 0),
      ...(onInformerError === undefined ? {} : { onError: onInformerError }),
    });
    this.#writeLedger = new WriteLedger({ clock: this.#clock });
    this.#backend = options.backend === undefined ? undefined : new RoutedBackend(options.backend);
    this.#named = namedBackends(options.backends);
    if (this.#backend !== undefined) {
      this.addCache(this.#informers, 'informers');
      this.#client = new Client({
        backend: this.#backend,
        clock: this.#clock,
        fieldManager: options.fieldManager ?? 'converge',
        fence: () => this.#sharding?.fence ?? this.#fence,
        cache: (type, signal, read) => {
          const metadataOnly = read?.metadataOnly === true;
          return this.#readyReader(type, metadataOnly) ?? this.#reader(type, signal, metadataOnly);
        },
        syncedCache: (type) => this.#syncedReader(type),
      });
    }
    if (sharding !== undefined) this.add(sharding, { group: 'others', name: 'shard-member' });
    const webhookServer = options.webhookServer;
    if (webhookServer !== undefined) {
      for (const method of ['start', 'validating', 'mutating', 'conversion'] as const) {
        if (typeof webhookServer[method] !== 'function') {
          throw new OptionsError('webhookServer', webhookServer, `a WebhookHost (with ${method}())`);
        }
      }
      this.#webhooks.serveWith(webhookServer);
      this.add(webhookServer, { group: 'servers', name: 'webhook-server' });
    }
  }

  /**
   * Starts registering the webhooks of `type` (see {@link WebhookBuilder}): served by the
   * `webhookServer` option's server, listed in {@link Manager.webhooks}.
   *
   * @example
   * manager.webhook<Website>(websiteType).withDefaulter(defaulter).withValidator(validator).complete();
   */
  webhook<T extends KubeObject = KubeObject>(type: ResourceType<T> | ResourceType): WebhookBuilder<T> {
    return new WebhookBuilder<T>(type as ResourceType, this.#webhooks);
  }

  /**
   * The RBAC rules the operator needs: derived from each controller's wiring when its builder
   * completes, plus those declared with `manager.permissions.require(...)` for what reconcilers do
   * with the client beyond that. Read by `converge manifests`; recording contacts nothing.
   *
   * @example
   * manager.permissions.require(secretType, ['get'], { namespace: 'web' });
   */
  get permissions(): Permissions {
    return this.#permissions;
  }

  /** Every webhook registration, in the order completed. */
  get webhooks(): readonly WebhookRegistration[] {
    return this.#webhooks.registrations;
  }

  /**
   * Shared informers, one per (backend, type, namespace, selectors), started with the manager and
   * resynced every `resyncPeriodMs` when set.
   */
  get informers(): InformerRegistry {
    return this.#informers;
  }

  /**
   * The manager's backend: the `backend` of its options for every kind, but those routed elsewhere
   * with {@link Manager.useBackend}. The client, controllers and shared informers use it, so each
   * kind is read, watched and written where it lives. Throws if the manager was created without one.
   */
  get backend(): Backend {
    if (this.#backend === undefined)
      throw new OptionsError('backend', undefined, 'a backend in ManagerOptions');
    return this.#backend;
  }

  /**
   * A backend the host gave by name (`ManagerOptions.backends`; `converge dev --nats URL` gives
   * `nats`). Throws an OptionsError naming the ones there are when there is none by that name.
   */
  namedBackend(name: string): Backend {
    const backend = this.#named.get(name);
    if (backend !== undefined) return backend;
    const known = [...this.#named.keys()];
    throw new OptionsError(
      'name',
      name,
      known.length === 0
        ? 'a backend the host gave, and it gave none (converge dev --nats URL gives one named nats)'
        : `one of the backends the host gave: ${known.join(', ')}`,
    );
  }

  /**
   * Keeps `types` in `backend` (or the named backend `backend` names) instead of the default:
   * `manager.client`, `manager.controller(type)`, the shared informers and everything built on the
   * manager's backend read, watch and write those kinds there, with no `backend` option per call.
   * A backend that registers kinds (a NATS backend creates their buckets) registers them first.
   * Before the manager starts only (informers already running would stay where they are).
   *
   * @example
   * export default async function operator(manager: Manager): Promise<void> {
   *   await manager.useBackend('nats', [applicationType]); // converge dev --nats URL
   *   manager.controller(applicationType).owns(configMapType).complete(reconcile);
   * }
   */
  async useBackend(backend: Backend | string, types: readonly ResourceType[]): Promise<void> {
    const routed = this.#backend;
    if (routed === undefined) throw new OptionsError('backend', undefined, 'a backend in ManagerOptions');
    if (this.#state !== 'new') throw new AlreadyStartedError('manager (useBackend before start)');
    const target = typeof backend === 'string' ? this.namedBackend(backend) : backend;
    if (typeof target?.get !== 'function') throw new OptionsError('backend', target, 'a Backend or a name');
    if (!Array.isArray(types)) throw new OptionsError('types', types, 'an array of resource types');
    const register = (target as { registerType?: (type: ResourceType) => unknown }).registerType;
    if (typeof register === 'function') for (const type of types) await register.call(target, type);
    routed.route(target, types);
  }

  /** The cached client over the default backend. Throws if the manager was created without one. */
  get client(): Client {
    if (this.#client === undefined)
      throw new OptionsError('backend', undefined, 'a backend in ManagerOptions');
    return this.#client;
  }

  /**
   * Where the writes of reconciles are recorded, shared by the controllers the manager builds
   * (`controller(type)`, `dynamicController`): an event that echoes a write of one of them names
   * the reconcile behind it, across controllers (cause chains, hot-loop detection of two
   * controllers that ping-pong an object). Pass it as `writeLedger` to a controller built by hand.
   */
  get writeLedger(): WriteLedger {
    return this.#writeLedger;
  }

  /**
   * Where the sources of the controllers the manager builds ask who, in another process, wrote
   * the object of an event (cross-process cause chains; `@converge/tracing` installs a lookup with
   * `propagate: true`). Pass it as `remoteWriters` to `fromEventSource` for a source built by hand.
   */
  get remoteWriters(): RemoteWriters {
    return this.#remoteWriters;
  }

  /**
   * Starts a controller builder whose primary kind is `type` (see {@link ControllerBuilder}), with
   * the primary's watch options (`predicates`, `namespace`, selectors, `backend`). Its controller
   * runs on the manager's clock and logs through the manager's logger.
   *
   * @example
   * manager.controller(replicaSetType, { predicates: [generationChanged()] }).owns(podType).complete(reconcile);
   */
  controller(type: ResourceType, options: BuilderWatchOptions = {}): ControllerBuilder {
    return new ControllerBuilder({
      informers: this.#informers,
      backend: this.backend,
      clock: this.#clock,
      logger: this.#baseLogger,
      permissions: this.#permissions,
      writeLedger: this.#writeLedger,
      remoteWriters: this.#remoteWriters,
      ...(this.#sharding === undefined ? {} : { sharding: this.#sharding }),
      shardedKind: (type: ResourceType) => this.#shardedKind(type),
      add: (runnable: Runnable, addOptions?: { name?: string }) => this.add(runnable, addOptions ?? {}),
    }).for(type, options);
  }

  /**
   * A {@link DynamicController} over the default backend, added to the manager (leader-gated
   * unless `needLeaderElection: false`; in a sharded manager, sharded by its member instead). In a manager with a default backend its kinds' informers
   * come from the manager's shared informers, which run before leadership: kinds served on a
   * standby replica are warm when it takes over. When a kind stops being served, the client's
   * cached reader of it (from `manager.client` reads) is released too, so nothing keeps its watch.
   *
   * @example
   * const dynamic = manager.dynamicController({ workers: 4 });
   * await dynamic.serve(widgetType, reconcileWidget);
   */
  dynamicController(
    options: Omit<DynamicControllerOptions, 'backend' | 'informers'> & { readonly backend?: Backend } = {},
  ): DynamicController {
    const backend = options.backend ?? this.backend;
    const onKindStopped = options.onKindStopped;
    const controller = new DynamicController({
      clock: this.#clock,
      logger: this.#baseLogger,
      writeLedger: this.#writeLedger,
      remoteWriters: this.#remoteWriters,
      // A sharded manager shards every controller it makes, this one too (as the builder's).
      ...(this.#sharding === undefined ? {} : { sharding: { member: this.#sharding } }),
      ...options,
      backend,
      // The client's cached reader of a stopped kind would keep its informer (and watch) forever.
      onKindStopped: (type) => {
        if (backend === this.#backend) this.#dropReader(type);
        onKindStopped?.(type);
      },
      // The shared informers run only in a manager with a default backend.
      ...(this.#backend === undefined ? {} : { informers: this.#informers }),
    });
    this.add(controller, { name: controller.name });
    return controller;
  }

  /**
   * `type` is the primary kind of a controller sharded by uid: the client's cached reads of it use
   * the member's share too (an object outside it reads as not found), so the replica caches only
   * its share once. A reader made earlier is dropped and made again on the next read.
   */
  #shardedKind(type: ResourceType): void {
    const id = readerId(type, false);
    if (this.#shardedKinds.has(id)) return;
    this.#shardedKinds.add(id);
    this.#dropReader(type);
  }

  /** Releases the client's cached readers of `type` (full and metadata-only), if any; the next read acquires them again. */
  #dropReader(type: ResourceType): void {
    this.#readyReaders = new WeakMap();
    for (const metadataOnly of [false, true]) {
      const id = readerId(type, metadataOnly);
      const handle = this.#readers.get(id);
      if (handle === undefined) continue;
      this.#readers.delete(id);
      handle.release();
    }
  }

  /**
   * The client's cached reader of `type`: the shared informer of the whole kind, or with
   * `metadataOnly` its metadata-only informer (a separate one, as in controller-runtime); for the
   * primary kind of a controller sharded by uid, of this replica's share.
   */
  async #reader(type: ResourceType, signal: AbortSignal | undefined, metadataOnly: boolean) {
    const id = readerId(type, metadataOnly);
    let handle = this.#readers.get(id);
    if (handle === undefined) {
      const scope = this.#shardedKinds.has(readerId(type, false)) ? this.#sharding?.cacheScope : undefined;
      handle = this.#informers.acquire<KubeObject>({
        backend: this.backend,
        type,
        ...(metadataOnly ? { metadataOnly } : {}),
        ...(scope === undefined ? {} : { shardScope: scope }),
      });
      this.#readers.set(id, handle);
    }
    try {
      await handle.informer.waitForSync(signal ?? this.#stop.signal, { failOn: refusesCachedReads });
    } catch (error) {
      throw cachedReadError(type, error);
    }
    return this.#shardedKinds.has(readerId(type, false))
      ? partialReader(handle.informer.cache)
      : handle.informer.cache;
  }

  /**
   * The client's reader of `type` when it has synced already (what {@link Manager.#reader} would
   * resolve to at once), else undefined. A controller's reads are almost all of synced kinds: they
   * skip an async frame, a promise and the reader's id per read.
   */
  #readyReader(type: ResourceType, metadataOnly: boolean): ObjectReader | undefined {
    const i = metadataOnly ? 1 : 0;
    const both = this.#readyReaders.get(type);
    const known = both?.[i];
    if (known !== undefined) return known;
    const handle = this.#readers.get(readerId(type, metadataOnly));
    if (handle === undefined || !handle.informer.hasSynced()) return undefined;
    const reader = this.#shardedKinds.has(readerId(type, false))
      ? partialReader(handle.informer.cache)
      : handle.informer.cache;
    if (both === undefined) this.#readyReaders.set(type, i === 0 ? [reader, undefined] : [undefined, reader]);
    else both[i] = reader;
    return reader;
  }

  /**
   * The client's cached reader of `type` if it has one and it has synced (the full one, else the
   * metadata-only one: a delete reads only the uid); never starts one.
   */
  #syncedReader(type: ResourceType) {
    for (const metadataOnly of [false, true]) {
      const handle = this.#readers.get(readerId(type, metadataOnly));
      if (handle?.informer.hasSynced()) return handle.informer.cache;
    }
    return undefined;
  }

  get state(): ManagerState {
    return this.#state;
  }

  /** True once every cache has synced (and until the manager stops). */
  get synced(): boolean {
    return this.#synced;
  }

  /** True while leader-gated runnables may run. */
  get leading(): boolean {
    return this.#leading;
  }

  /** The manager's clock and logger (the one given in its options), for parts it creates. */
  get clock(): Clock {
    return this.#clock;
  }
  get logger(): Logger {
    return this.#baseLogger;
  }

  /** Adds a runnable (or a function `(signal) => Promise<void>`). Added while running, it starts at once if its group has. */
  add(runnable: Runnable | ((signal: AbortSignal) => Promise<void>), options: AddOptions = {}): void {
    const r: Runnable = typeof runnable === 'function' ? { start: runnable } : runnable;
    if (typeof r !== 'object' || r === null || typeof r.start !== 'function') {
      throw new OptionsError('runnable', runnable, 'a Runnable or a function');
    }
    const group = options.group ?? (r.needLeaderElection === false ? 'others' : 'leader');
    if (!(group in this.#groups))
      throw new OptionsError('group', group, "'servers', 'caches', 'others' or 'leader'");
    const name = options.name ?? `runnable-${++this.#count}`;
    if (group === 'caches') {
      if (typeof (r as Partial<SyncingRunnable>).waitForSync !== 'function') {
        throw new OptionsError(
          'runnable',
          runnable,
          'a runnable with waitForSync(signal) in the caches group',
        );
      }
      this.#caches.push(r as SyncingRunnable);
    }
    // A controller says while it waits for its sources (the readiness check above reports it).
    const status = (r as Partial<SyncReporting>).syncStatus;
    if (typeof status === 'function') {
      const named = (r as { name?: unknown }).name;
      this.#syncing.push({
        name: typeof named === 'string' ? `controller ${named}` : name,
        runnable: r as Runnable & SyncReporting,
      });
    }
    if (!this.#groups[group].add({ name, runnable: r })) {
      this.#logger.info({ runnable: name }, 'Runnable added after stop; ignored');
    }
  }

  /** Adds a cache that must sync before controllers start. */
  addCache(cache: SyncingRunnable, name?: string): void {
    this.add(cache, { group: 'caches', ...(name === undefined ? {} : { name }) });
  }

  addHealthCheck(name: string, check: Check): void {
    this.#health.add(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.#ready.add(name, check);
  }

  /** Runs the health checks (liveness). */
  health(): Promise<CheckReport> {
    return this.#health.run();
  }

  /** Runs the readiness checks; not ready until caches synced. */
  ready(): Promise<CheckReport> {
    return this.#ready.run();
  }

  /** Runs everything until `signal` aborts or a runnable fails. Starts once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state !== 'new') throw new AlreadyStartedError('manager');
    this.#state = 'starting';
    const stop = this.#stop.signal;
    const onAbort = (): void => this.#stop.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.#groups.servers.start();
      this.#groups.caches.start();
      await this.#syncCaches(stop);
      if (!stop.aborted) {
        this.#synced = true;
        this.#state = 'running';
        this.#groups.others.start();
        this.#startLeaderGroup(stop);
        this.#logger.info({}, 'Manager started');
      }
      await whenAborted(stop);
      await this.#shutdown();
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#synced = false;
      this.#leading = false;
      this.#state = 'stopped';
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Stops the manager as if its signal aborted. */
  stop(): void {
    this.#stop.abort(new Error('manager stopped'));
  }

  async #syncCaches(stop: AbortSignal): Promise<void> {
    if (this.#caches.length === 0) return;
    const timeoutMs = this.#cacheSyncTimeoutMs;
    let timer: Timer | undefined;
    const progress = syncProgress(this.#clock, timeoutMs, (waitedMs) =>
      this.#logger.warn(
        {
          waitingFor: this.#unsyncedInformers(),
          waitedMs,
          ...(timeoutMs === Number.POSITIVE_INFINITY ? {} : { cacheSyncTimeoutMs: timeoutMs }),
        },
        'Caches not synced yet; still waiting',
      ),
    );
    try {
      await Promise.race([
        Promise.all(this.#caches.map((c) => c.waitForSync(stop))),
        new Promise<never>((_, reject) => {
          // Infinity waits for as long as it takes, reporting progress above.
          if (timeoutMs === Number.POSITIVE_INFINITY) return;
          timer = this.#clock.setTimer(() => reject(new CacheSyncTimeoutError(timeoutMs)), timeoutMs);
        }),
        whenAborted(stop),
      ]);
    } catch (error) {
      if (!stop.aborted) this.#fail(error);
    } finally {
      timer?.cancel();
      progress.cancel();
    }
  }

  /** The shared informers not synced yet, each with its last list or watch error if it backs off. */
  #unsyncedInformers(): string[] {
    return this.#informers
      .informers()
      .filter((informer) => !informer.hasSynced())
      .map((informer) => {
        const state = informer.state;
        if (state.phase !== 'backingOff') return `informer ${informer.name} (${state.phase})`;
        const error = state.error instanceof Error ? state.error.message : String(state.error);
        return `informer ${informer.name} (its last ${state.next === 'list' ? 'list' : 'watch'} failed: ${error})`;
      });
  }

  #startLeaderGroup(stop: AbortSignal): void {
    const election = this.#leaderElection;
    if (election === undefined) {
      this.#leading = true;
      this.#groups.leader.start();
      return;
    }
    void (async () => {
      try {
        // Its own signal, aborted only after leader-gated runnables have stopped (see #shutdown), so
        // a released lease can never let a standby start while our gated work still runs.
        const lost = await election.acquire(this.#election.signal);
        if (stop.aborted) return;
        try {
          await this.#announceFence(election, lost);
        } catch (error) {
          if (!lost.aborted) throw error;
        }
        if (stop.aborted) return;
        if (lost.aborted) {
          this.#fail(new LeadershipLostError({ cause: lost.reason }));
          return;
        }
        this.#leading = true;
        this.#logger.info({}, 'Leadership acquired; starting leader-gated runnables');
        this.#groups.leader.start();
        const onLost = (): void => {
          this.#leading = false;
          if (!stop.aborted) this.#fail(new LeadershipLostError({ cause: lost.reason }));
        };
        if (lost.aborted) onLost();
        else lost.addEventListener('abort', onLost, { once: true });
      } catch (error) {
        if (!stop.aborted) this.#fail(error);
      }
    })();
  }

  /**
   * Before leader-gated work starts: the term's fence becomes the one every client write carries,
   * and the backends that fence are told of it, so that from now on they refuse writes a stale
   * leader still makes (a paused process resumed, a write held in a socket buffer). A backend that
   * already holds the lock's name at this epoch or higher, from another holder, means the lock's
   * history restarted (a Lease deleted by hand counts its transitions from 0 again): this replica
   * holds the lock now, so it raises the lock's epoch above the mark and announces again. A lock
   * that cannot be raised, or a refusal after that, fails the manager: acting without a valid
   * fence is unsafe.
   */
  async #announceFence(election: LeaderElection, lost: AbortSignal): Promise<void> {
    let fence = election.fence?.();
    if (fence === undefined) return;
    this.#fence = fence;
    const backend = this.#backend;
    if (backend === undefined) return;
    let raised = false;
    // A server briefly unreachable is retried for as long as the term lasts; a refusal is final.
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
      try {
        const mark = await backend.announceFence(fence, lost);
        if (mark === undefined) {
          this.#logger.warn(
            { fence, backend: backend.fallback.name },
            'The backend does not fence writes: a paused or partitioned former leader can still write after this term began (docs/guide/fencing.md says how to fence on each backend)',
          );
          return;
        }
        break;
      } catch (error) {
        const current = error instanceof FencedError ? error.current : undefined;
        if (
          !raised &&
          !lost.aborted &&
          current !== undefined &&
          current.name === fence.name &&
          election.raiseFencingToken !== undefined
        ) {
          raised = true;
          this.#logger.warn(
            { fence, mark: current },
            "The backend's fence mark for the lock is at or past this term's epoch (the lock's history restarted?): raising the lock's epoch above it",
          );
          fence = await election.raiseFencingToken(current.epoch + 1, lost);
          this.#fence = fence;
          continue;
        }
        if (lost.aborted || !(error instanceof BackendError) || !error.retryable) throw error;
        this.#logger.warn({ err: error, fence }, 'Announcing the fence failed; retrying');
        await sleepOn(this.#clock, delayMs, lost).catch(() => undefined);
      }
    }
    this.#logger.info({ fence }, 'Fence announced; writes carry it from now on');
  }

  /** This replica's shard member ({@link ManagerOptions.sharding}), if the manager shards. */
  get sharding(): ShardMember | undefined {
    return this.#sharding;
  }

  /** The fence client writes carry: the last leader term's, undefined before leadership. */
  get fence(): Fence | undefined {
    return this.#fence;
  }

  #fail(error: unknown): void {
    if (this.#failure === undefined) {
      this.#failure = error instanceof Error ? error : new RunnableFailedError('unknown', { cause: error });
      this.#logger.error({ err: error }, 'Manager stopping after a failure');
    }
    this.#stop.abort(error);
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    this.#synced = false;
    const reason = this.#stop.signal.reason;
    const order: RunnableGroupName[] = ['leader', 'others', 'caches', 'servers'];
    let timer: Timer | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      if (this.#gracefulShutdownTimeoutMs > 0) {
        timer = this.#clock.setTimer(() => resolve('timeout'), this.#gracefulShutdownTimeoutMs);
      }
    });
    const stopAll = (async () => {
      for (const name of order) {
        await this.#groups[name].stop(reason);
        if (name === 'leader') {
          this.#election.abort(reason);
          await this.#leaderElection?.stopped?.();
        }
      }
      return 'done' as const;
    })();
    const outcome = this.#gracefulShutdownTimeoutMs === 0 ? 'done' : await Promise.race([stopAll, deadline]);
    timer?.cancel();
    if (outcome === 'timeout') {
      const running = order.flatMap((name) => this.#groups[name].runningNames());
      this.#logger.error({ running }, 'Shutdown timed out');
      if (this.#failure === undefined) {
        this.#failure = new ManagerShutdownTimeoutError(this.#gracefulShutdownTimeoutMs, running);
      }
    } else {
      this.#logger.info({}, 'Manager stopped');
    }
  }
}

/**
 * List errors that keep a cached read's informer from syncing until someone acts: RBAC refused the
 * list or watch (403), or the kind is not served (404). The read fails at once with them instead of
 * waiting; the informer goes on retrying.
 */
function refusesCachedReads(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === BackendErrorCodes.FORBIDDEN || code === BackendErrorCodes.NOT_FOUND;
}

/** The error a cached read of `type` fails with when its informer's list was refused. */
function cachedReadError(type: ResourceType, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === BackendErrorCodes.NOT_FOUND) return new KindNotServedError(type, { cause: error });
  if (code !== BackendErrorCodes.FORBIDDEN) return error;
  const resource = qualifiedResource(type);
  const message = error instanceof Error ? error.message : String(error);
  return new ForbiddenError(
    `cannot read ${type.kind} through the cache: it lists and watches ${resource} in all namespaces, ` +
      `and the server refused: ${message}. Grant list and watch on ${resource} cluster-wide ` +
      `(declare it with manager.permissions.require(type, ['get', 'list', 'watch']) for converge manifests)`,
    { cause: error, details: { group: type.group, kind: type.plural } },
  );
}

/** The named backends of the options, checked. */
function namedBackends(
  backends: Readonly<Record<string, Backend>> | undefined,
): ReadonlyMap<string, Backend> {
  if (backends === undefined) return new Map();
  if (typeof backends !== 'object' || backends === null)
    throw new OptionsError('backends', backends, 'an object of backends by name');
  for (const [name, backend] of Object.entries(backends)) {
    if (typeof backend?.get !== 'function') throw new OptionsError(`backends.${name}`, backend, 'a Backend');
  }
  return new Map(Object.entries(backends));
}

const partialReaders = new WeakMap<ObjectReader, ObjectReader>();

/**
 * `cache` marked partial: it holds this replica's shard of the kind, so the client reads a miss
 * and a list from the backend. One per cache.
 */
function partialReader(cache: ObjectReader): ObjectReader {
  let reader = partialReaders.get(cache);
  if (reader === undefined) {
    reader = Object.freeze({
      get: (key: ObjectKey) => cache.get(key),
      list: (options?: Parameters<ObjectReader['list']>[0]) => cache.list(options),
      get resourceVersion() {
        return cache.resourceVersion;
      },
      partial: true,
    });
    partialReaders.set(cache, reader);
  }
  return reader;
}

/** The key of one of the client's cached readers: the kind, and whether it holds metadata only. */
function readerId(type: ResourceType, metadataOnly: boolean): string {
  return `${type.group}/${type.version}/${type.plural}${metadataOnly ? ':metadata' : ''}`;
}
