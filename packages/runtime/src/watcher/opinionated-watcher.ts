import type { ResourceType } from '../backend/index.ts';
import { hasFinalizer, isBeingDeleted } from '../client/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { integer } from '../options.ts';
import { type FinalizerPatchClient, FinalizerPatcher } from './finalizer-patcher.ts';
import {
  defaultFinalizerSupplier,
  type FinalizerSupplier,
  inProgressFinalizerSupplier,
  resolveFinalizer,
} from './finalizer-supplier.ts';
import type { ResourceWatcher, WatcherContext } from './types.ts';

export interface OpinionatedWatcherOptions<T extends KubeObject = KubeObject> {
  /** The kind watched; names the default finalizers and is the type of every finalizer patch. */
  readonly type: ResourceType<T>;
  /** Reads and patches objects of the kind: the runtime `Client` or a `Backend`. */
  readonly client: FinalizerPatchClient;
  /** Your handlers. Every method is optional; see {@link OpinionatedWatcher.wrap}. */
  readonly handlers?: ResourceWatcher<T>;
  /** The finalizer, or a supplier of it. Default {@link defaultFinalizerSupplier}: `operator.<version>.<kind>.<group>`. */
  readonly finalizer?: string | FinalizerSupplier;
  /**
   * The finalizer held while a new object's add handler has not yet succeeded, or false for none
   * (app-sdk v0.9.10's behaviour). Default {@link inProgressFinalizerSupplier}:
   * `wip.<version>.<kind>.<group>`. See {@link OpinionatedWatcher} for what it protects against.
   */
  readonly inProgressFinalizer?: string | FinalizerSupplier | false;
  /** Times a finalizer patch that hits a conflict is recomputed on a fresh read. Default 3 (app-sdk v0.43). */
  readonly conflictRetries?: number;
  /** Times the sleeps between conflict retries. Default the real clock. */
  readonly clock?: Clock;
}

/**
 * A {@link ResourceWatcher} that owns a finalizer on every object of its kind so that no delete is
 * missed, across restarts and downtime included (grafana app-sdk's `OpinionatedWatcher`). Give it
 * to an informer controller in place of your handlers, which it calls:
 *
 * - **add** (a new object, or one listed at start-up): with a deletionTimestamp → as below for
 *   deletion; carrying the finalizer → `sync` (the object was handled before: the start-up relist),
 *   never `add`; otherwise → the in-progress finalizer is written, `add` runs, then the in-progress
 *   finalizer becomes the finalizer (one patch). A failing `add` leaves the in-progress finalizer
 *   and throws; nothing else is written.
 * - **update**: an update whose generation is unchanged (> 0) is ignored — resyncs and status or
 *   metadata writes, this watcher's own patches included — unless the object shows unfinished
 *   work of this watcher (being deleted with one of its finalizers, or an add in progress): the
 *   object is then read again and the work finished if it still is unfinished. So a pending retry
 *   dropped by the controller's retry-dequeue policy (by default every new event drops them) is
 *   taken up again by the next event, while an echo of work already done calls nothing. Being
 *   deleted → as below. Without the finalizer → handled as a new object (`add`, then the finalizer;
 *   `update` is not called — app-sdk v0.9.10 went on to call it too). An update that only added
 *   the finalizer → nothing. Otherwise `update(old, new)`.
 * - **deletion** (a deletionTimestamp): with neither finalizer of this watcher → nothing (not
 *   ours to finish); otherwise `delete`, and only once it succeeded the finalizers are removed (one
 *   patch; the apiserver then removes the object if no other finalizer holds it). A failing
 *   `delete` keeps them and throws, so it is retried.
 * - **delete events** call nothing: deletion is handled on the deletionTimestamp, while the
 *   finalizer still holds the object.
 *
 * **The in-progress finalizer** (app-sdk v0.32; on by default). Without it, a new object has no
 * finalizer until `add` succeeds; if `add` keeps failing (after creating part of its external
 * state) and the object is deleted meanwhile, the object vanishes at once and `delete` never runs.
 * With it, the deletion waits and `delete` runs, for an object whose `add` may never have
 * succeeded — so make `delete` tolerate state that was never (fully) created. It costs one more
 * patch per new object. `inProgressFinalizer: false` turns it off.
 *
 * **Finalizer patches** carry the object's resourceVersion as a precondition; on a conflict the
 * object is read again and the patch recomputed, up to `conflictRetries` times after 0–0.5 s,
 * 1–1.5 s, 2–2.5 s (on `clock`). Removing a finalizer that is already gone, or from an object that
 * is gone, succeeds. A patch that still fails throws a {@link FinalizerPatchError}, so the whole
 * call is retried; handlers must be idempotent (a retry of a call whose handler succeeded but
 * whose patch failed runs the handler again).
 *
 * @example
 * const watcher = new OpinionatedWatcher({
 *   type: widgetType,
 *   client: manager.client,
 *   handlers: {
 *     async add(widget, { signal }) { await provision(widget, signal); },
 *     async delete(widget, { signal }) { await deprovision(widget, signal); },
 *     async sync(widget) { await check(widget); },
 *   },
 * });
 * controller.addWatcher(watcher, widgetType.kind);
 */
export class OpinionatedWatcher<T extends KubeObject = KubeObject> implements ResourceWatcher<T> {
  /** The finalizer this watcher owns. */
  readonly finalizer: string;
  /** The finalizer it holds while an add is in progress; undefined when turned off. */
  readonly inProgressFinalizer: string | undefined;
  readonly #handlers: ResourceWatcher<T>;
  readonly #patcher: FinalizerPatcher;

  constructor(options: OpinionatedWatcherOptions<T>) {
    const type = checkType(options?.type);
    const client = options.client;
    if (typeof client?.get !== 'function' || typeof client.patch !== 'function') {
      throw new OptionsError('client', client, 'a client with get() and patch() (a Client or a Backend)');
    }
    const handlers = options.handlers ?? {};
    if (typeof handlers !== 'object' || handlers === null) {
      throw new OptionsError('handlers', handlers, 'a ResourceWatcher object');
    }
    this.finalizer = resolveFinalizer('finalizer', options.finalizer, type, defaultFinalizerSupplier);
    const wip = options.inProgressFinalizer;
    this.inProgressFinalizer =
      wip === false
        ? undefined
        : resolveFinalizer('inProgressFinalizer', wip, type, inProgressFinalizerSupplier);
    if (this.inProgressFinalizer === this.finalizer) {
      throw new OptionsError('inProgressFinalizer', wip, 'a finalizer other than `finalizer`');
    }
    this.#handlers = handlers;
    this.#patcher = new FinalizerPatcher(
      client,
      type,
      options.clock ?? realClock,
      integer('conflictRetries', options.conflictRetries, 3, 0),
    );
  }

  /**
   * Handlers that call `watcher`'s add, update and delete, and its add for `sync` only when
   * `syncToAdd` (app-sdk's `Wrap`): with `syncToAdd` false, `watcher.sync` is not called even if
   * it exists. `wrap(undefined, …)` gives handlers that do nothing.
   *
   * @example
   * new OpinionatedWatcher({ type, client, handlers: OpinionatedWatcher.wrap(legacyWatcher, true) });
   */
  static wrap<T extends KubeObject>(
    watcher: ResourceWatcher<T> | undefined,
    syncToAdd: boolean,
  ): ResourceWatcher<T> {
    if (watcher === undefined || watcher === null) return {};
    return {
      add: (object, context) => watcher.add?.(object, context),
      update: (oldObject, object, context) => watcher.update?.(oldObject, object, context),
      delete: (object, context) => watcher.delete?.(object, context),
      ...(syncToAdd ? { sync: (object: T, context: WatcherContext) => watcher.add?.(object, context) } : {}),
    };
  }

  async add(object: T, context: WatcherContext): Promise<void> {
    if (isBeingDeleted(object)) return this.#finalize(object, context);
    if (hasFinalizer(object, this.finalizer)) {
      context.logger.debug({ finalizer: this.finalizer }, 'Object carries the finalizer, calling sync');
      await this.#handlers.sync?.(object, context);
      const wip = this.inProgressFinalizer;
      if (wip !== undefined && hasFinalizer(object, wip)) await this.#patcher.remove(object, [wip], context);
      return;
    }
    await this.#handleNew(object, context);
  }

  async update(oldObject: T, object: T, context: WatcherContext): Promise<void> {
    const generation = object.metadata.generation ?? 0;
    const sameGeneration = (oldObject.metadata.generation ?? 0) === generation;
    if (this.#unfinished(object)) {
      let current = object;
      if (sameGeneration) {
        // Often the echo of this watcher's own patch: act on what is there now.
        const fresh = await this.#patcher.read(object, context);
        if (fresh === undefined || !this.#unfinished(fresh)) return;
        current = fresh;
      }
      return isBeingDeleted(current) ? this.#finalize(current, context) : this.#handleNew(current, context);
    }
    if (generation > 0 && sameGeneration) return;
    if (isBeingDeleted(object)) return; // none of our finalizers: not ours to finish
    if (!hasFinalizer(object, this.finalizer)) return this.#handleNew(object, context);
    if (!hasFinalizer(oldObject, this.finalizer) && sameGeneration) return; // our finalizer patch
    await this.#handlers.update?.(oldObject, object, context);
  }

  /** Does nothing: deletion is handled on the deletionTimestamp, while the finalizer holds the object. */
  delete(_object: T, _context: WatcherContext): void {}

  /** Being deleted with a finalizer of ours, or an add in progress (the in-progress finalizer without the final one). */
  #unfinished(object: T): boolean {
    const wip = this.inProgressFinalizer;
    const hasWip = wip !== undefined && hasFinalizer(object, wip);
    if (isBeingDeleted(object)) return hasWip || hasFinalizer(object, this.finalizer);
    return hasWip && !hasFinalizer(object, this.finalizer);
  }

  /** `delete`, then every finalizer of ours removed; nothing if the object carries none. */
  async #finalize(object: T, context: WatcherContext): Promise<void> {
    const ours = [this.finalizer, this.inProgressFinalizer].filter(
      (f): f is string => f !== undefined && hasFinalizer(object, f),
    );
    if (ours.length === 0) return;
    context.logger.debug({ finalizers: ours }, 'Object is being deleted, calling delete');
    await this.#handlers.delete?.(object, context);
    await this.#patcher.remove(object, ours, context);
  }

  /** A new object (or one whose add never succeeded): in-progress finalizer, add, final finalizer. */
  async #handleNew(object: T, context: WatcherContext): Promise<void> {
    const wip = this.inProgressFinalizer;
    let current = object;
    if (wip !== undefined) {
      const held = await this.#patcher.add(object, wip, context);
      if (held.status === 'gone' || held.status === 'deleting') {
        context.logger.debug({ finalizer: wip }, 'Object went away before its add, not calling add');
        return;
      }
      current = held.object;
    }
    context.logger.debug({ finalizer: this.finalizer }, 'Calling add');
    await this.#handlers.add?.(current, context);
    const done =
      wip === undefined
        ? await this.#patcher.add(current, this.finalizer, context)
        : await this.#patcher.replace(current, wip, this.finalizer, context);
    if (done.status === 'gone' || (done.status === 'deleting' && !this.#unfinished(done.object))) {
      context.logger.warn(
        { finalizer: this.finalizer },
        'Object was deleted before its finalizer was added; delete will not be called for it',
      );
    }
  }
}

function checkType<T extends KubeObject>(type: ResourceType<T> | undefined): ResourceType {
  if (
    typeof type !== 'object' ||
    type === null ||
    typeof type.kind !== 'string' ||
    typeof type.version !== 'string'
  ) {
    throw new OptionsError('type', type, 'a ResourceType');
  }
  return type as unknown as ResourceType;
}
