import type { ResourceType } from '../backend/index.ts';
import { hasFinalizer, isBeingDeleted } from '../client/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { integer } from '../options.ts';
import { type FinalizerPatchClient, FinalizerPatcher } from './finalizer-patcher.ts';
import { defaultFinalizerSupplier, type FinalizerSupplier, resolveFinalizer } from './finalizer-supplier.ts';
import { reconcileStateOf, withReconcileState } from './reconcile-state.ts';
import type { EventReconciler, ReconcileRequest, ReconcileResult, WatcherContext } from './types.ts';

export interface OpinionatedReconcilerOptions<T extends KubeObject = KubeObject, S = unknown> {
  /** The kind reconciled; names the default finalizer and is the type of every finalizer patch. */
  readonly type: ResourceType<T>;
  /** Reads and patches objects of the kind: the runtime `Client` or a `Backend`. */
  readonly client: FinalizerPatchClient;
  /** The reconciler it delegates to. Default none (every delegated request succeeds). */
  readonly reconciler?: EventReconciler<T, S>;
  /** The finalizer, or a supplier of it. Default {@link defaultFinalizerSupplier}. */
  readonly finalizer?: string | FinalizerSupplier;
  /** Times a finalizer patch that hits a conflict is recomputed on a fresh read. Default 3. */
  readonly conflictRetries?: number;
  /** Times the sleeps between conflict retries. Default the real clock. */
  readonly clock?: Clock;
}

/**
 * The state an {@link OpinionatedReconciler} hands back to the controller: the wrapped
 * reconciler's own state, and which finalizer patch is still owed after the wrapped reconciler
 * succeeded (so a retry only patches).
 */
export interface OpinionatedReconcilerState<S = unknown> {
  readonly inner?: S | undefined;
  readonly pendingFinalizer?: 'add' | 'remove' | undefined;
}

type Result<S> = ReconcileResult<OpinionatedReconcilerState<S>> | undefined;

/**
 * An {@link EventReconciler} that wraps another with finalizer handling (grafana app-sdk's
 * `OpinionatedReconciler`, the reconciler-level form of the `OpinionatedWatcher`):
 *
 * - `delete` requests are ignored (deletion is handled on the deletionTimestamp);
 * - being deleted with the finalizer → delegated as `delete`; once that succeeds (without a
 *   requeue) the finalizer is removed. If the removal fails, the error is thrown carrying
 *   `pendingFinalizer: 'remove'` in its state, so the retry only patches;
 * - being deleted without the finalizer → ignored;
 * - `create` with the finalizer → delegated as `resync` (the object was handled before);
 * - `create` without it → delegated, then the finalizer added (a failed add is retried alone, like
 *   a failed removal);
 * - `update` without it → the finalizer is added and the request is not delegated: the patch
 *   brings another update, which is;
 * - everything else → delegated.
 *
 * The wrapped reconciler sees its own state (`request.state`) and returns it as usual; it may
 * throw an error carrying state with {@link withReconcileState}. Unlike the watcher there is no
 * in-progress finalizer (app-sdk's reconciler has none either): a create that keeps failing leaves
 * the object without a finalizer, and its deletion is not delegated.
 *
 * Finalizer patches behave as the {@link OpinionatedWatcher}'s: resourceVersion precondition,
 * conflict retries on `clock`, a removal from an object already gone succeeds.
 *
 * @example
 * controller.addReconciler(new OpinionatedReconciler({ type: widgetType, client, reconciler: widgetReconciler }), 'Widget');
 */
export class OpinionatedReconciler<T extends KubeObject = KubeObject, S = unknown>
  implements EventReconciler<T, OpinionatedReconcilerState<S>>
{
  /** The finalizer this reconciler owns. */
  readonly finalizer: string;
  readonly #reconciler: EventReconciler<T, S> | undefined;
  readonly #patcher: FinalizerPatcher;

  constructor(options: OpinionatedReconcilerOptions<T, S>) {
    const type = options?.type as ResourceType | undefined;
    if (typeof type !== 'object' || type === null || typeof type.kind !== 'string') {
      throw new OptionsError('type', type, 'a ResourceType');
    }
    const client = options.client;
    if (typeof client?.get !== 'function' || typeof client.patch !== 'function') {
      throw new OptionsError('client', client, 'a client with get() and patch() (a Client or a Backend)');
    }
    const reconciler = options.reconciler;
    if (reconciler !== undefined && typeof reconciler?.reconcile !== 'function') {
      throw new OptionsError('reconciler', reconciler, 'an EventReconciler with a reconcile() method');
    }
    this.finalizer = resolveFinalizer('finalizer', options.finalizer, type, defaultFinalizerSupplier);
    this.#reconciler = reconciler;
    this.#patcher = new FinalizerPatcher(
      client,
      type,
      options.clock ?? realClock,
      integer('conflictRetries', options.conflictRetries, 3, 0),
    );
  }

  async reconcile(
    request: ReconcileRequest<T, OpinionatedReconcilerState<S>>,
    context: WatcherContext,
  ): Promise<Result<S>> {
    const { action, object } = request;
    const state = request.state;
    if (action === 'delete') return undefined;
    const has = hasFinalizer(object, this.finalizer);
    if (isBeingDeleted(object)) {
      if (!has) return undefined;
      let result: ReconcileResult<S> | undefined;
      if (state?.pendingFinalizer !== 'remove') {
        result = await this.#delegate({ action: 'delete', object, state: state?.inner }, context);
        if (result?.requeueAfterMs !== undefined) return outer(result);
      }
      await this.#owe('remove', result === undefined ? state?.inner : result.state, () =>
        this.#patcher.remove(object, [this.finalizer], context),
      );
      return outer(result);
    }
    if (action === 'create') {
      if (has) return outer(await this.#delegate({ action: 'resync', object, state: state?.inner }, context));
      let result: ReconcileResult<S> | undefined;
      if (state?.pendingFinalizer !== 'add') {
        result = await this.#delegate({ action, object, state: state?.inner }, context);
        if (result?.requeueAfterMs !== undefined) return outer(result);
      }
      await this.#owe('add', result === undefined ? state?.inner : result.state, async () => {
        const done = await this.#patcher.add(object, this.finalizer, context);
        if (done.status === 'gone' || done.status === 'deleting') {
          context.logger.warn(
            { finalizer: this.finalizer },
            'Object was deleted before its finalizer was added; its deletion will not be delegated',
          );
        }
      });
      return outer(result);
    }
    if (action === 'update' && !has) {
      context.logger.debug({ finalizer: this.finalizer }, 'Adding the missing finalizer, not delegating');
      await this.#patcher.add(object, this.finalizer, context);
      return undefined;
    }
    return outer(await this.#delegate({ action, object, state: state?.inner }, context));
  }

  /** The wrapped reconciler's answer; an error it throws carries its state wrapped in ours. */
  async #delegate(
    request: ReconcileRequest<T, S>,
    context: WatcherContext,
  ): Promise<ReconcileResult<S> | undefined> {
    if (this.#reconciler === undefined) return undefined;
    try {
      return (await this.#reconciler.reconcile(request, context)) ?? undefined;
    } catch (error) {
      const carried = reconcileStateOf(error);
      if (carried.carried && error instanceof Error) {
        withReconcileState(error, { inner: carried.state as S } satisfies OpinionatedReconcilerState<S>);
      }
      throw error;
    }
  }

  /** Runs a finalizer patch owed after a successful delegation; its failure says so in its state. */
  async #owe(pending: 'add' | 'remove', inner: S | undefined, patch: () => Promise<unknown>): Promise<void> {
    try {
      await patch();
    } catch (error) {
      const state: OpinionatedReconcilerState<S> = { inner, pendingFinalizer: pending };
      throw error instanceof Error ? withReconcileState(error, state) : error;
    }
  }
}

function outer<S>(result: ReconcileResult<S> | undefined): Result<S> {
  if (result === undefined) return undefined;
  return {
    ...(result.requeueAfterMs === undefined ? {} : { requeueAfterMs: result.requeueAfterMs }),
    ...(result.state === undefined ? {} : { state: { inner: result.state } }),
  };
}
