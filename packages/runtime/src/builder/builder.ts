import { type Backend, type ResourceType, RoutedBackend } from '../backend/index.ts';
import type { WriteLedger } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import { Controller, type ControllerOptions } from '../controller/index.ts';
import { OptionsError } from '../errors.ts';
import { type EventHandler, enqueueForObject, enqueueForOwner } from '../handler/index.ts';
import type { Informer, InformerRegistry, InformerShardScope } from '../informer/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { enqueueForLabelOwner, type OwnerLabelScheme, ownedByKindSelector } from '../ownership/index.ts';
import { derivedRules, type PermissionRule } from '../permissions/index.ts';
import type { Predicate } from '../predicate/index.ts';
import type { ReconcileFunction, Reconciler } from '../reconcile/index.ts';
import { type Runnable, whenAborted } from '../runnable/index.ts';
import { type ShardGate, UidShardKeys } from '../sharding/index.ts';
import { fromEventSource, type RemoteWriters, type Source } from '../source/index.ts';
import { type StopHook, type StopHookOptions, withStopHook } from './stop-hook.ts';

/**
 * What the builder needs from a manager: where informers come from, where to add the controller,
 * and the clock and logger its controllers use (a Manager passes its own).
 */
export interface BuilderHost {
  readonly informers: InformerRegistry;
  readonly backend: Backend;
  /** The controllers' clock unless `withOptions` gives one. Default: the real clock. */
  readonly clock?: Clock;
  /**
   * The logger controllers log through unless `withOptions` gives one: each controller's lines
   * carry `controller`, each reconcile's also `namespace`, `name` and `reconcileId`, and failed
   * reconciles are logged at error level with the error (`err`). Default: none (nothing is logged).
   */
  readonly logger?: Logger;
  /**
   * Where the controllers record their writes and look up echoes (a Manager passes its
   * `writeLedger`, shared by all its controllers). Default: each controller has its own.
   */
  readonly writeLedger?: WriteLedger;
  /**
   * Asked who, in another process, wrote the objects of events (a Manager passes its
   * `remoteWriters`). Default: none.
   */
  readonly remoteWriters?: RemoteWriters;
  /**
   * The shard member the host's controllers reconcile under (a sharded manager's), unless
   * `withOptions({ sharding })` names another. Default: none (controllers are not sharded).
   */
  readonly sharding?: ShardGate | undefined;
  /**
   * Told the primary kind of each controller sharded by uid (a Manager then caches that kind's
   * objects for `client` reads by the same share). Default: nothing.
   */
  shardedKind?(type: ResourceType): void;
  /** Adds the controller (wrapped when it has stop hooks) to run with the host. */
  add(runnable: Runnable, options?: { name?: string }): void;
  /**
   * Where `complete()` records the RBAC rules the wiring needs on the host's backend (see
   * {@link derivedRules}) and the types it touches (a Manager passes `manager.permissions`).
   * Kinds in another backend (`backend` option) need nothing from the API server and are not
   * recorded. Default: none.
   */
  readonly permissions?: {
    require(rule: PermissionRule): void;
    recordType(type: ResourceType): void;
  };
}

export interface BuilderWatchOptions {
  /** The backend the kind lives in. Default: the manager's. */
  readonly backend?: Backend;
  readonly predicates?: readonly Predicate<KubeObject>[];
  /** Watch only this namespace. Default: all. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /**
   * Watch and cache only this shard of the kind: a KEP-5866 shard selector, such as
   * `shardSelectorFor(replica, replicas)`. Default: all.
   */
  readonly shardSelector?: string;
  /**
   * Watch and cache only the kind's metadata (controller-runtime's `builder.OnlyMetadata`): its
   * informer is the shared metadata-only one, whose objects and events are `PartialObjectMetadata`
   * (`{ apiVersion, kind, metadata }`). Enough to map owned objects to their owner (`owns`) or
   * any object by its labels, annotations or owner references (`watches`), without holding
   * thousands of Pod or Secret bodies. Predicates and handlers then see only metadata
   * (`generationChanged()`, `labelChanged()` work; a predicate on `spec` does not). Read the
   * objects with `manager.client.getMetadata` / `listMetadata` (the same informer). Default false.
   */
  readonly metadataOnly?: boolean;
}

/** Options of {@link ControllerBuilder.reads}: which objects of the kind are cached. */
export interface ReadsOptions {
  /** The backend the kind lives in. Default: the manager's. */
  readonly backend?: Backend;
  /** Cache only this namespace. Default: all. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Cache only this shard (see {@link BuilderWatchOptions.shardSelector}). Default: all. */
  readonly shardSelector?: string;
  /** Cache only the kind's metadata (see {@link BuilderWatchOptions.metadataOnly}). Default false. */
  readonly metadataOnly?: boolean;
}

/** Options of {@link ControllerBuilder.onStop}. */
export type OnStopOptions = Pick<StopHookOptions, 'timeoutMs' | 'onError'>;

export interface OwnsOptions extends BuilderWatchOptions {
  /**
   * Map only controller references (default true), as controller-runtime's Owns does. Ignored
   * with label ownership: an object records one owner.
   */
  readonly onlyController?: boolean;
  /**
   * How owned objects point at their owner: `metadata.ownerReferences` (within one backend) or the
   * owner labels of the ownership module, which work across backends.
   *
   * Default: 'labels' when `backend` is given and is not the primary kind's backend (owner
   * references cannot cross backends) or when `ownerLabels` is given, else 'references'.
   * 'references' with another backend or with `ownerLabels` is an OptionsError. With 'labels', the
   * informer caches only objects labelled `converge.dev/owner-kind=<primary kind>` (ANDed with
   * `labelSelector`), and events map to the owner the labels record (`enqueueForLabelOwner`);
   * write them with `setOwnerLabels`.
   */
  readonly ownership?: 'references' | 'labels';
  /**
   * The owner labels, with label ownership. Default `convergeOwnerLabels`; `kumoriOwnerLabels`
   * recognises the objects a Kumori controller labelled (`kumori/ownerkind`, `kumori/ownerkey`).
   * Write them with the same scheme: `setOwnerLabels(object, type, owner, kumoriOwnerLabels)`.
   */
  readonly ownerLabels?: OwnerLabelScheme;
}

interface Read {
  readonly type: ResourceType;
  readonly options: ReadsOptions;
}

interface Watch {
  readonly type: ResourceType;
  readonly handler: EventHandler<KubeObject, ObjectKey>;
  readonly options: BuilderWatchOptions & { readonly shardScope?: InformerShardScope };
  readonly label: string;
}

/**
 * Wires a controller from public parts, as a user could by hand (controller-runtime's builder):
 * `for` the primary kind, `owns` kinds it creates (events map to the owner through controller
 * references, or through owner labels when the owned kind lives in another backend), `watches`
 * any kind with a handler, `reads` kinds it only reads (cached, never enqueueing), `onStop`
 * cleanup, `withOptions`, then `complete(reconciler)`.
 *
 * Hard mode, without the builder: acquire informers from `manager.informers`, turn each into a
 * source with `fromEventSource(informer, handler, ...predicates)` (a read-only kind is a source
 * with only `waitForSync`), create a `Controller` with those sources and
 * `manager.add(withStopHook(controller, hook))`.
 *
 * Any of them may watch and cache only metadata (`{ metadataOnly: true }`, see
 * {@link BuilderWatchOptions.metadataOnly}).
 *
 * @example
 * controllerFor(manager, websiteType)
 *   .owns(deploymentType)
 *   .owns(configMapType)
 *   .owns(secretType, { metadataOnly: true })
 *   .complete(async ({ namespace, name }, { signal }) => done());
 */
export class ControllerBuilder {
  readonly #host: BuilderHost;
  #name: string | undefined;
  #for: Watch | undefined;
  readonly #watches: Watch[] = [];
  readonly #sources: Source<ObjectKey>[] = [];
  readonly #reads: Read[] = [];
  readonly #stopHooks: { readonly hook: StopHook; readonly options: OnStopOptions }[] = [];
  #options: Partial<ControllerOptions<ObjectKey>> = {};
  #completed = false;

  constructor(host: BuilderHost) {
    this.#host = host;
  }

  /** Name for logs and metrics. Default: the primary kind, lower-cased. */
  named(name: string): this {
    this.#name = name;
    return this;
  }

  /** The primary kind: its events enqueue the object's own key. Required, once. */
  for(type: ResourceType, options: BuilderWatchOptions = {}): this {
    if (this.#for !== undefined) throw new OptionsError('for', type.kind, 'one primary kind per controller');
    this.#for = { type, handler: enqueueForObject(), options, label: `for:${type.kind}` };
    return this;
  }

  /**
   * A kind the controller creates; its events enqueue the owning primary object. Give `backend`
   * when the kind lives in another backend than the primary: ownership then goes by labels (see
   * {@link OwnsOptions.ownership}).
   */
  owns(type: ResourceType, options: OwnsOptions = {}): this {
    const { ownership } = options;
    if (ownership !== undefined && ownership !== 'references' && ownership !== 'labels') {
      throw new OptionsError('ownership', ownership, "'references' or 'labels'");
    }
    this.#watches.push({ type, handler: undefined as never, options, label: `owns:${type.kind}` });
    return this;
  }

  /** Any kind, mapped to requests by `handler` (e.g. `enqueueFromMapFunction`). */
  watches(
    type: ResourceType,
    handler: EventHandler<KubeObject, ObjectKey>,
    options: BuilderWatchOptions = {},
  ): this {
    this.#watches.push({ type, handler, options, label: `watches:${type.kind}` });
    return this;
  }

  /**
   * A kind the reconciler only reads (Kumori's "terciary" resources): its objects are cached by
   * the manager's shared informers, and the controller's workers start only once that cache has
   * synced, but its events never enqueue anything. Read it through `manager.client` (the
   * manager's backend, without namespace or selectors: the same informer) or through
   * `manager.informers.acquire(<the same spec>).informer.cache` (shared, not a second watch).
   *
   * @example
   * manager.controller(applicationType).reads(quotaType, { backend: nats }).complete(reconcile);
   */
  reads(type: ResourceType, options: ReadsOptions = {}): this {
    if (typeof options !== 'object' || options === null) {
      throw new OptionsError(`reads(${type?.kind}).options`, options, 'an object');
    }
    this.#reads.push({ type, options });
    return this;
  }

  /**
   * Cleanup that runs once when the controller stops, after its workers finished (Kumori's
   * `Clean()`), with a signal that aborts after `timeoutMs` (default 10 000). Its failure or
   * timeout is logged and passed to `onError`, never thrown into the manager's shutdown: the
   * controller stops as it would have without the hook. Several hooks run one after the other, in
   * the order given. See {@link withStopHook}.
   *
   * @example
   * manager.controller(applicationType).onStop(async ({ signal }) => tunnels.closeAll(signal)).complete(reconcile);
   */
  onStop(hook: StopHook, options: OnStopOptions = {}): this {
    if (typeof hook !== 'function') throw new OptionsError('onStop', hook, 'a function');
    if (typeof options !== 'object' || options === null) {
      throw new OptionsError('onStop.options', options, 'an object');
    }
    this.#stopHooks.push({ hook, options });
    return this;
  }

  /** A source that is not an informer (a channel, a poller). */
  watchesSource(source: Source<ObjectKey>): this {
    this.#sources.push(source);
    return this;
  }

  /** Controller options (workers, retry policy, timeouts, …). */
  withOptions(options: Partial<Omit<ControllerOptions<ObjectKey>, 'reconciler' | 'sources'>>): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  /** Creates the controller, adds it to the manager and returns it. */
  complete(reconciler: Reconciler<ObjectKey> | ReconcileFunction<ObjectKey>): Controller<ObjectKey> {
    if (this.#completed) throw new OptionsError('complete', 'twice', 'one complete() per builder');
    const primary = this.#for;
    if (primary === undefined)
      throw new OptionsError('for', undefined, 'a primary kind: call for(type) first');
    const watches = this.#watches.map((w) => (w.label.startsWith('owns:') ? this.#owned(w, primary) : w));
    this.#completed = true;
    const name = this.#name ?? this.#options.name ?? primary.type.kind.toLowerCase();
    const member = this.#options.sharding?.member ?? this.#host.sharding;
    let sharding = this.#options.sharding ?? (member === undefined ? undefined : { member });
    // Sharded by uid: the primary's informer caches only the member's share (its scope), and a
    // request's shard key is its object's uid slot.
    let forWatch: Watch = primary;
    if (
      sharding?.member.by === 'uid' &&
      sharding.keyOf === undefined &&
      (primary.options.shardSelector ?? '') === ''
    ) {
      const scope = sharding.member.cacheScope;
      const options = scope === undefined ? primary.options : { ...primary.options, shardScope: scope };
      const keys = new UidShardKeys(this.#informer(primary.type, options).cache);
      forWatch = { ...primary, options, handler: keys.handler(primary.handler) };
      sharding = { ...sharding, keyOf: keys.keyOf };
      this.#host.shardedKind?.(primary.type);
    }
    const sources = [forWatch, ...watches].map((w) => this.#source(w));
    const reads = this.#reads.map((r) => this.#readSource(r));
    // A sharded controller enqueues the cached primaries it gains (the same informer, shared).
    if (sharding !== undefined && sharding.requests === undefined) {
      const cache = this.#informer(forWatch.type, forWatch.options).cache;
      sharding = { ...sharding, requests: () => cache.keys() };
    }
    const controller = new Controller<ObjectKey>({
      ...(this.#host.clock === undefined ? {} : { clock: this.#host.clock }),
      ...(this.#host.writeLedger === undefined ? {} : { writeLedger: this.#host.writeLedger }),
      ...(this.#host.logger === undefined
        ? {}
        : { logger: this.#host.logger.child({ kind: primary.type.kind }) }),
      ...this.#options,
      ...(sharding === undefined ? {} : { sharding }),
      name,
      reconciler,
      sources: [...sources, ...reads, ...this.#sources],
    });
    let runnable: Runnable = controller;
    const clock = this.#options.clock ?? this.#host.clock;
    const logger = (this.#options.logger ?? this.#host.logger ?? noopLogger).child({ controller: name });
    for (const { hook, options } of this.#stopHooks) {
      runnable = withStopHook(runnable, hook, {
        ...options,
        name: `controller ${name}`,
        logger,
        ...(clock === undefined ? {} : { clock }),
      });
    }
    this.#recordPermissions(primary);
    this.#host.add(runnable, { name: `controller:${name}` });
    return controller;
  }

  /** Registers the derived RBAC rules of every kind wired on the host's backend. */
  #recordPermissions(primary: Watch): void {
    const permissions = this.#host.permissions;
    if (permissions === undefined) return;
    const wired: [ResourceType, 'for' | 'owns' | 'watches' | 'reads', ReadsOptions][] = [
      [primary.type, 'for', primary.options],
      ...this.#watches.map(
        (w) =>
          [w.type, w.label.startsWith('owns:') ? 'owns' : 'watches', w.options] as [
            ResourceType,
            'owns' | 'watches',
            ReadsOptions,
          ],
      ),
      ...this.#reads.map((r) => [r.type, 'reads', r.options] as [ResourceType, 'reads', ReadsOptions]),
    ];
    // Kinds kept elsewhere (another backend given, or routed there by manager.useBackend) need
    // nothing from the API server.
    const host = this.#host.backend;
    const api = host instanceof RoutedBackend ? host.fallback : host;
    for (const [type, role, options] of wired) {
      if (homeOf(options.backend ?? host, type) !== api) continue;
      const namespace =
        options.namespace === undefined || options.namespace === '' ? undefined : options.namespace;
      permissions.recordType(type);
      for (const rule of derivedRules(type, role, type.namespaced ? namespace : undefined))
        permissions.require(rule);
    }
  }

  /** An `owns` watch with its handler (and, for label ownership, its label selector). */
  #owned(w: Watch, primary: Watch): Watch {
    const options = w.options as OwnsOptions;
    const primaryBackend = homeOf(primary.options.backend ?? this.#host.backend, primary.type);
    const ownedBackend = homeOf(options.backend ?? this.#host.backend, w.type);
    const { ownerLabels } = options;
    const ownership =
      options.ownership ??
      (ownedBackend === primaryBackend && ownerLabels === undefined ? 'references' : 'labels');
    if (ownership === 'references' && ownedBackend !== primaryBackend) {
      throw new OptionsError(
        `owns(${w.type.kind}).ownership`,
        ownership,
        "'labels': owner references cannot point to an owner in another backend",
      );
    }
    if (ownership === 'references' && ownerLabels !== undefined) {
      throw new OptionsError(
        `owns(${w.type.kind}).ownerLabels`,
        ownerLabels,
        "no ownerLabels with ownership 'references', or ownership 'labels'",
      );
    }
    if (ownership === 'labels') {
      const scheme = ownerLabels === undefined ? {} : { ownerLabels };
      const owned = ownedByKindSelector(primary.type, ownerLabels);
      const extra = options.labelSelector;
      const labelSelector = extra === undefined || extra.trim() === '' ? owned : `${owned},${extra}`;
      return {
        ...w,
        options: { ...options, labelSelector },
        handler: enqueueForLabelOwner<KubeObject>({ ownerType: primary.type, ...scheme }),
      };
    }
    return {
      ...w,
      handler: enqueueForOwner<KubeObject>({
        ownerKind: primary.type.kind,
        ownerGroup: primary.type.group,
        onlyController: options.onlyController ?? true,
        ownerClusterScoped: !primary.type.namespaced,
      }),
    };
  }

  #informer(
    type: ResourceType,
    options: ReadsOptions & { readonly shardScope?: InformerShardScope },
  ): Informer<KubeObject> {
    return this.#host.informers.acquire<KubeObject>({
      backend: options.backend ?? this.#host.backend,
      type,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
      ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
      ...(options.shardSelector === undefined ? {} : { shardSelector: options.shardSelector }),
      ...(options.shardScope === undefined ? {} : { shardScope: options.shardScope }),
      ...(options.metadataOnly === undefined ? {} : { metadataOnly: options.metadataOnly }),
    }).informer;
  }

  /** A read-only kind: a source that never enqueues, synced when the kind's cache is. */
  #readSource(r: Read): Source<ObjectKey> {
    const informer = this.#informer(r.type, r.options);
    return {
      name: `reads:${r.type.kind}`,
      start: (signal) => whenAborted(signal),
      waitForSync: (signal) => informer.waitForSync(signal),
    };
  }

  #source(w: Watch): Source<ObjectKey> {
    const informer = this.#informer(w.type, w.options);
    return fromEventSource({
      eventSource: informer,
      handler: w.handler,
      predicates: w.options.predicates ?? [],
      name: w.label,
      startEventSource: false,
      ...(this.#host.remoteWriters === undefined ? {} : { remoteWriters: this.#host.remoteWriters }),
    });
  }
}

/** Starts a builder for a controller whose primary kind is `type`. */
export function controllerFor(
  host: BuilderHost,
  type: ResourceType,
  options?: BuilderWatchOptions,
): ControllerBuilder {
  return new ControllerBuilder(host).for(type, options);
}

/** The backend that holds `type`: through a manager's routes when `backend` is its routed backend. */
function homeOf(backend: Backend, type: ResourceType): Backend {
  return backend instanceof RoutedBackend ? backend.backendFor(type) : backend;
}
