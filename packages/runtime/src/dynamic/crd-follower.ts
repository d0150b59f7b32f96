import { apiVersionOf, type Backend, type ResourceType } from '../backend/index.ts';
import { type Clock, realClock, type Timer } from '../clock/index.ts';
import { AbortedError, AlreadyStartedError, OptionsError } from '../errors.ts';
import { type Informer, type InformerHandle, InformerRegistry } from '../informer/index.ts';
import { type CustomResourceDefinition, customResourceDefinitionType } from '../kinds/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { type Runnable, whenAborted } from '../runnable/index.ts';
import { ExponentialRateLimiter, type RateLimiter } from '../workqueue/index.ts';
import { isEstablished, MalformedCrdError, resourceTypeOfCrd } from './crd.ts';
import { type KindHandler, kindId, type ServeOptions, type ServesKinds } from './types.ts';

/** Options of a {@link CrdFollower}. */
export interface CrdFollowerOptions {
  /** Where the CustomResourceDefinitions are watched. Required. */
  readonly backend: Backend;
  /** What serves the kinds (a `DynamicController`). Required. */
  readonly controller: ServesKinds;
  /**
   * The handler of a CRD's kind, asked when the kind is about to be served; undefined: do not
   * serve this CRD. `type` is {@link resourceTypeOfCrd} of `crd`. Required.
   */
  readonly handlerFor: (type: ResourceType, crd: CustomResourceDefinition) => KindHandler | undefined;
  /** Follow only the CRDs matching this label selector (server-side). Default: every CRD. */
  readonly labelSelector?: string;
  /** Follow only the CRDs it returns true for; checked on every change. Default: every CRD. */
  readonly filter?: (crd: CustomResourceDefinition) => boolean;
  /** The options of each served kind, or a function giving them, asked when the kind is served. */
  readonly serveOptions?:
    | ServeOptions
    | ((type: ResourceType, crd: CustomResourceDefinition) => ServeOptions | undefined);
  /**
   * Shared informers to take the CRD informer from (a manager's `informers`). Default: the
   * follower's own registry, started with it.
   */
  readonly informers?: InformerRegistry;
  /**
   * Delays before a failed `serve` or `stopServing` of a CRD is tried again, per CRD. Default
   * exponential, 1 000 ms doubling to 120 000 ms.
   */
  readonly rateLimiter?: RateLimiter;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * Whether a manager runs it only while leading. Default false: following CRDs only keeps the
   * served kinds in step, like a cache; the controller it drives is what leader election gates.
   */
  readonly needLeaderElection?: boolean;
}

/**
 * What a backend may offer to refresh API discovery on demand: `KubeBackend.resolve` reloads
 * discovery when it does not know `apiVersion` + `kind` yet.
 */
interface ResolvesTypes {
  resolve(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceType | undefined>;
}

function resolverOf(backend: Backend): ResolvesTypes | undefined {
  const candidate = backend as Partial<ResolvesTypes>;
  return typeof candidate.resolve === 'function' ? (candidate as ResolvesTypes) : undefined;
}

/** The kind asked of the controller for one CRD. */
interface Serving {
  readonly type: ResourceType;
  /** The type's facts, to tell a changed type from the same one. */
  readonly facts: string;
  /** Whether `serve` resolved (false: it is pending, or failed and will be tried again). */
  served: boolean;
}

/** One followed CRD, by name. */
interface Follow {
  readonly name: string;
  serving: Serving | undefined;
  /** The pass running now (passes of one CRD never overlap). */
  running: Promise<void> | undefined;
  /** A change arrived during the running pass: run another one after it. */
  dirty: boolean;
  retry: Timer | undefined;
}

/** The follower's lifecycle: it reacts to CRD changes only while running. */
type State =
  | { readonly phase: 'new' }
  | {
      readonly phase: 'running';
      readonly informer: Informer<CustomResourceDefinition>;
      readonly signal: AbortSignal;
    }
  | { readonly phase: 'stopping' }
  | { readonly phase: 'stopped' };

/** {@link CrdFollowerOptions} checked, with the defaults filled in. */
interface ResolvedOptions {
  readonly backend: Backend;
  readonly controller: ServesKinds;
  readonly handlerFor: CrdFollowerOptions['handlerFor'];
  readonly labelSelector: string | undefined;
  readonly filter: CrdFollowerOptions['filter'];
  readonly serveOptions: CrdFollowerOptions['serveOptions'];
  readonly informers: InformerRegistry | undefined;
  readonly rateLimiter: RateLimiter;
  readonly clock: Clock;
  readonly logger: Logger;
}

function factsOf(type: ResourceType): string {
  return JSON.stringify([
    type.group,
    type.version,
    type.kind,
    type.plural,
    type.singular,
    type.namespaced,
    type.shortNames ?? [],
    type.statusSubresource ?? false,
  ]);
}

/**
 * Serves the kinds of CustomResourceDefinitions as they come and go, without a restart: each CRD
 * that matches (`labelSelector`, `filter`), is established ({@link isEstablished}) and gets a
 * handler from `handlerFor` has its kind — {@link resourceTypeOfCrd}, the storage version — served
 * by `controller`; it stops being served when the CRD is deleted, stops matching or stops being
 * established. A CRD whose deletion started stays served until it is gone: its custom resources are
 * being deleted, and their finalizers still need the handler. Against a Kubernetes API server, discovery is refreshed before a new kind is served
 * (where the backend can: `KubeBackend.resolve`), so clients resolving it by apiVersion and kind
 * find it.
 *
 * **Level-based.** Every change of a CRD only marks it; a pass then compares what should be served
 * for it now with what is, and calls `serve` or `stopServing`. Passes of one CRD run one at a time,
 * in order (a change during a pass runs one more pass after it); different CRDs proceed
 * independently. A change that leaves the kind as it is (a schema edit, a new label) does nothing.
 *
 * **A changed kind** (the storage version moves from v1 to v2, or a version gains a status
 * subresource) is stopped, then the new one served: never both at once, since both would be the
 * same stored objects reconciled twice, concurrently, by two handlers. The new kind is served as
 * soon as the old one's in-flight reconciles finished.
 *
 * **Failures never stop it.** A `serve` or `stopServing` that rejects (a sync timeout, say), or a
 * `handlerFor` that throws, is logged and the pass tried again after a backoff on the clock. A
 * malformed CRD ({@link MalformedCrdError}) is logged and not served until it changes.
 *
 * **Lifecycle.** `start(signal)` runs until `signal` aborts, then stops serving every kind it
 * served and resolves. {@link CrdFollower.waitForSync} resolves once the CRDs have been listed and
 * the first pass of each finished.
 *
 * @example
 * const dynamic = new DynamicController({ backend });
 * const follower = new CrdFollower({
 *   backend,
 *   controller: dynamic,
 *   labelSelector: 'example.com/managed=true',
 *   handlerFor: (type) => async (request, { cache }) => converge(type, cache.get(request)),
 * });
 * manager.add(dynamic);
 * manager.add(follower);
 */
export class CrdFollower implements Runnable {
  readonly needLeaderElection: boolean;
  readonly #o: ResolvedOptions;
  readonly #follows = new Map<string, Follow>();
  readonly #synced: Promise<void>;
  #resolveSynced: () => void = () => undefined;
  #state: State = { phase: 'new' };

  constructor(options: CrdFollowerOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const { backend, controller, handlerFor, filter, serveOptions, labelSelector, informers } = options;
    if (typeof backend !== 'object' || backend === null)
      throw new OptionsError('backend', backend, 'a Backend');
    if (typeof controller?.serve !== 'function' || typeof controller.stopServing !== 'function')
      throw new OptionsError('controller', controller, 'a ServesKinds (serve and stopServing)');
    if (typeof handlerFor !== 'function') throw new OptionsError('handlerFor', handlerFor, 'a function');
    if (filter !== undefined && typeof filter !== 'function')
      throw new OptionsError('filter', filter, 'a function');
    if (labelSelector !== undefined && typeof labelSelector !== 'string')
      throw new OptionsError('labelSelector', labelSelector, 'a label selector string');
    const isOptions = typeof serveOptions === 'object' && serveOptions !== null;
    if (serveOptions !== undefined && !isOptions && typeof serveOptions !== 'function')
      throw new OptionsError('serveOptions', serveOptions, 'ServeOptions or a function');
    if (informers !== undefined && typeof informers?.acquire !== 'function')
      throw new OptionsError('informers', informers, 'an InformerRegistry');
    this.#o = {
      backend,
      controller,
      handlerFor,
      labelSelector,
      filter,
      serveOptions,
      informers,
      rateLimiter:
        options.rateLimiter ?? new ExponentialRateLimiter({ baseDelayMs: 1_000, maxDelayMs: 120_000 }),
      clock: options.clock ?? realClock,
      logger: (options.logger ?? noopLogger).child({ component: 'crd-follower' }),
    };
    this.needLeaderElection = options.needLeaderElection ?? false;
    this.#synced = new Promise((resolve) => {
      this.#resolveSynced = resolve;
    });
  }

  /** The kinds it serves now (those whose `serve` resolved), in no particular order. */
  following(): ResourceType[] {
    return [...this.#follows.values()].flatMap((f) => (f.serving?.served === true ? [f.serving.type] : []));
  }

  /**
   * Resolves once the CRDs were listed and the first pass of each finished (a `serve` that failed
   * counts: it is retried in the background). Rejects with an AbortedError when `signal` aborts
   * first.
   */
  waitForSync(signal: AbortSignal): Promise<void> {
    if (signal.aborted)
      return Promise.reject(new AbortedError('waitForSync aborted', { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new AbortedError('waitForSync aborted', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
      void this.#synced.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Follows CRDs until `signal` aborts, then stops serving every kind it served. Starts once. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#state.phase !== 'new') throw new AlreadyStartedError('crd follower');
    if (signal.aborted) {
      this.#state = { phase: 'stopped' };
      return;
    }
    const stopOwn = new AbortController();
    const registry =
      this.#o.informers ?? new InformerRegistry({ clock: this.#o.clock, logger: this.#o.logger });
    const ownRun = this.#o.informers === undefined ? registry.start(stopOwn.signal) : undefined;
    let handle: InformerHandle<CustomResourceDefinition> | undefined;
    let unsubscribe = (): void => undefined;
    try {
      handle = registry.acquire<CustomResourceDefinition>({
        backend: this.#o.backend,
        type: customResourceDefinitionType,
        ...(this.#o.labelSelector === undefined ? {} : { labelSelector: this.#o.labelSelector }),
      });
      const { informer } = handle;
      this.#state = { phase: 'running', informer, signal };
      unsubscribe = informer.subscribe((event) => this.#mark(event.object.metadata.name ?? ''));
      void this.#initialPass(informer, signal);
      await whenAborted(signal);
    } finally {
      this.#state = { phase: 'stopping' };
      unsubscribe();
      await this.#stopAll();
      handle?.release();
      stopOwn.abort();
      await ownRun;
      this.#state = { phase: 'stopped' };
    }
  }

  async #initialPass(informer: Informer<CustomResourceDefinition>, signal: AbortSignal): Promise<void> {
    try {
      await informer.waitForSync(signal);
    } catch {
      return; // stopped before the first list
    }
    const names = informer.cache.keys().map((key) => key.name);
    await Promise.all(names.map((name) => this.#follows.get(name)?.running ?? Promise.resolve()));
    this.#o.logger.info({ crds: names.length, following: this.following().length }, 'CRDs synced');
    this.#resolveSynced();
  }

  /** A CRD changed: run a pass for it (after the running one, if any). */
  #mark(name: string): void {
    if (this.#state.phase !== 'running' || name === '') return;
    let follow = this.#follows.get(name);
    if (follow === undefined) {
      follow = { name, serving: undefined, running: undefined, dirty: false, retry: undefined };
      this.#follows.set(name, follow);
    }
    follow.retry?.cancel();
    follow.retry = undefined;
    if (follow.running !== undefined) follow.dirty = true;
    else follow.running = this.#run(follow);
  }

  async #run(follow: Follow): Promise<void> {
    // Not inside the informer's dispatch: changes of the same turn make one pass.
    await Promise.resolve();
    let failed = false;
    do {
      follow.dirty = false;
      try {
        await this.#pass(follow);
        this.#o.rateLimiter.forget(follow.name);
        failed = false;
      } catch (error) {
        failed = true;
        this.#o.logger.error(
          { crd: follow.name, kind: follow.serving && kindId(follow.serving.type), err: error },
          'Following a CRD failed; retrying after a backoff',
        );
      }
    } while (follow.dirty && this.#state.phase === 'running');
    follow.running = undefined;
    if (failed && this.#state.phase === 'running') {
      const delayMs = this.#o.rateLimiter.when(follow.name);
      follow.retry = this.#o.clock.setTimer(() => {
        follow.retry = undefined;
        this.#mark(follow.name);
      }, delayMs);
    } else if (!failed && follow.serving === undefined && this.#follows.get(follow.name) === follow) {
      this.#follows.delete(follow.name);
    }
  }

  /** One pass for one CRD: what should be served for it now, against what is. */
  async #pass(follow: Follow): Promise<void> {
    if (this.#state.phase !== 'running') return;
    const crd = this.#state.informer.cache.get({ namespace: '', name: follow.name });
    const wanted = crd === undefined ? undefined : this.#wanted(crd);
    const facts = wanted === undefined ? undefined : factsOf(wanted);
    // Another kind (a moved storage version, or none): stop the old one first. The same kind with
    // other facts (a status subresource added) is served again in place, without a gap.
    const sameKind =
      follow.serving !== undefined && wanted !== undefined && kindId(follow.serving.type) === kindId(wanted);
    if (follow.serving !== undefined && follow.serving.facts !== facts && !sameKind) await this.#stop(follow);
    if (crd === undefined || wanted === undefined || facts === undefined) return;
    if (follow.serving?.served === true && follow.serving.facts === facts) return;
    const handler = this.#o.handlerFor(wanted, crd);
    if (handler === undefined) {
      if (follow.serving !== undefined) await this.#stop(follow);
      this.#o.logger.debug({ crd: follow.name, kind: kindId(wanted) }, 'No handler for a CRD kind');
      return;
    }
    const options =
      typeof this.#o.serveOptions === 'function' ? this.#o.serveOptions(wanted, crd) : this.#o.serveOptions;
    await this.#refreshDiscovery(wanted);
    follow.serving = { type: wanted, facts, served: false };
    await this.#o.controller.serve(wanted, handler, options);
    follow.serving.served = true;
    this.#o.logger.info({ crd: follow.name, kind: kindId(wanted) }, 'Serving a CRD kind');
  }

  /** The kind to serve for `crd` now, or undefined (not matching, not established, malformed). */
  #wanted(crd: CustomResourceDefinition): ResourceType | undefined {
    if (this.#o.filter !== undefined && !this.#o.filter(crd)) return undefined;
    if (!isEstablished(crd)) return undefined;
    try {
      return resourceTypeOfCrd(crd);
    } catch (error) {
      if (!(error instanceof MalformedCrdError)) throw error;
      this.#o.logger.warn({ crd: error.crd, reason: error.reason, err: error }, 'CRD cannot be served');
      return undefined;
    }
  }

  async #stop(follow: Follow): Promise<void> {
    const serving = follow.serving;
    if (serving === undefined) return;
    await this.#o.controller.stopServing(serving.type);
    follow.serving = undefined;
    this.#o.logger.info({ crd: follow.name, kind: kindId(serving.type) }, 'Stopped serving a CRD kind');
  }

  async #refreshDiscovery(type: ResourceType): Promise<void> {
    const resolver = resolverOf(this.#o.backend);
    if (resolver === undefined || this.#state.phase !== 'running') return;
    try {
      const found = await resolver.resolve(apiVersionOf(type), type.kind, this.#state.signal);
      if (found === undefined)
        this.#o.logger.debug({ kind: kindId(type) }, 'Discovery does not list a CRD kind yet');
    } catch (error) {
      this.#o.logger.debug({ kind: kindId(type), err: error }, 'Discovery refresh failed');
    }
  }

  /** After the signal: waits for running passes, then stops serving every kind it served. */
  async #stopAll(): Promise<void> {
    const follows = [...this.#follows.values()];
    for (const follow of follows) {
      follow.retry?.cancel();
      follow.retry = undefined;
    }
    await Promise.all(follows.map((follow) => follow.running ?? Promise.resolve()));
    await Promise.all(
      follows.map(async (follow) => {
        try {
          await this.#stop(follow);
        } catch (error) {
          this.#o.logger.error({ crd: follow.name, err: error }, 'Stopping a CRD kind failed');
        }
      }),
    );
    this.#follows.clear();
  }
}
