import type { Backend, ResourceType } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import { Controller, type ControllerOptions } from '../controller/index.ts';
import { OptionsError } from '../errors.ts';
import { type EventHandler, enqueueForObject, enqueueForOwner } from '../handler/index.ts';
import type { InformerRegistry } from '../informer/index.ts';
import type { Logger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { enqueueForLabelOwner, ownedByKindSelector } from '../ownership/index.ts';
import type { Predicate } from '../predicate/index.ts';
import type { ReconcileFunction, Reconciler } from '../reconcile/index.ts';
import { fromEventSource, type Source } from '../source/index.ts';

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
  add(controller: Controller<ObjectKey>, options?: { name?: string }): void;
}

export interface BuilderWatchOptions {
  /** The backend the kind lives in. Default: the manager's. */
  readonly backend?: Backend;
  readonly predicates?: readonly Predicate<KubeObject>[];
  /** Watch only this namespace. Default: all. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

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
   * references cannot cross backends), else 'references'. 'references' with another backend is an
   * OptionsError. With 'labels', the informer caches only objects labelled
   * `converge.dev/owner-kind=<primary kind>` (ANDed with `labelSelector`), and events map to the
   * owner the labels record (`enqueueForLabelOwner`); write them with `setOwnerLabels`.
   */
  readonly ownership?: 'references' | 'labels';
}

interface Watch {
  readonly type: ResourceType;
  readonly handler: EventHandler<KubeObject, ObjectKey>;
  readonly options: BuilderWatchOptions;
  readonly label: string;
}

/**
 * Wires a controller from public parts, as a user could by hand (controller-runtime's builder):
 * `for` the primary kind, `owns` kinds it creates (events map to the owner through controller
 * references, or through owner labels when the owned kind lives in another backend), `watches`
 * any kind with a handler, `withOptions`, then `complete(reconciler)`.
 *
 * Hard mode, without the builder: acquire informers from `manager.informers`, turn each into a
 * source with `fromEventSource(informer, handler, ...predicates)`, create a `Controller` with
 * those sources and `manager.add(controller)`.
 *
 * @example
 * controllerFor(manager, websiteType)
 *   .owns(deploymentType)
 *   .owns(configMapType)
 *   .complete(async ({ namespace, name }, { signal }) => done());
 */
export class ControllerBuilder {
  readonly #host: BuilderHost;
  #name: string | undefined;
  #for: Watch | undefined;
  readonly #watches: Watch[] = [];
  readonly #sources: Source<ObjectKey>[] = [];
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
    const sources = [primary, ...watches].map((w) => this.#source(w));
    const controller = new Controller<ObjectKey>({
      ...(this.#host.clock === undefined ? {} : { clock: this.#host.clock }),
      ...(this.#host.logger === undefined ? {} : { logger: this.#host.logger }),
      ...this.#options,
      name,
      reconciler,
      sources: [...sources, ...this.#sources],
    });
    this.#host.add(controller, { name: `controller:${name}` });
    return controller;
  }

  /** An `owns` watch with its handler (and, for label ownership, its label selector). */
  #owned(w: Watch, primary: Watch): Watch {
    const options = w.options as OwnsOptions;
    const primaryBackend = primary.options.backend ?? this.#host.backend;
    const ownedBackend = options.backend ?? this.#host.backend;
    const ownership = options.ownership ?? (ownedBackend === primaryBackend ? 'references' : 'labels');
    if (ownership === 'references' && ownedBackend !== primaryBackend) {
      throw new OptionsError(
        `owns(${w.type.kind}).ownership`,
        ownership,
        "'labels': owner references cannot point to an owner in another backend",
      );
    }
    if (ownership === 'labels') {
      const owned = ownedByKindSelector(primary.type);
      const extra = options.labelSelector;
      const labelSelector = extra === undefined || extra.trim() === '' ? owned : `${owned},${extra}`;
      return {
        ...w,
        options: { ...options, labelSelector },
        handler: enqueueForLabelOwner<KubeObject>({ ownerType: primary.type }),
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

  #source(w: Watch): Source<ObjectKey> {
    const { informer } = this.#host.informers.acquire<KubeObject>({
      backend: w.options.backend ?? this.#host.backend,
      type: w.type,
      ...(w.options.namespace === undefined ? {} : { namespace: w.options.namespace }),
      ...(w.options.labelSelector === undefined ? {} : { labelSelector: w.options.labelSelector }),
      ...(w.options.fieldSelector === undefined ? {} : { fieldSelector: w.options.fieldSelector }),
    });
    return fromEventSource({
      eventSource: informer,
      handler: w.handler,
      predicates: w.options.predicates ?? [],
      name: w.label,
      startEventSource: false,
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
