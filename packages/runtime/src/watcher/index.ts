/**
 * Event-style controllers (grafana app-sdk's operator package): watchers with add / update /
 * delete / sync handlers and event reconcilers, coordinated over informers by an
 * {@link InformerController} (per-object order, a bounded pool, retries with a policy and a
 * retry-dequeue policy); the {@link OpinionatedWatcher} and {@link OpinionatedReconciler}, which own
 * a finalizer so that no delete is missed across downtime and restarts. The seed's `Operator` is
 * the `Manager`: it runs these beside reconcile-by-key and dynamic controllers and stops all
 * of them on the first error. `docs/coming-from/grafana-app-sdk.md` maps every identifier.
 *
 * @module
 */
export {
  FinalizerPatchError,
  InformerAlreadyAddedError,
  InvalidFinalizerError,
  InvalidReconcileResultError,
} from './errors.ts';
export type { FinalizerPatchClient } from './finalizer-patcher.ts';
export {
  defaultFinalizerSupplier,
  type FinalizerSupplier,
  finalizerNameProblem,
  inProgressFinalizerSupplier,
} from './finalizer-supplier.ts';
export { InformerController } from './informer-controller.ts';
export type {
  AddHandlerOptions,
  AddInformerOptions,
  InformerControllerOptions,
  InformerControllerState,
  InformerControllerStats,
  WatcherErrorInfo,
} from './informer-controller-options.ts';
export {
  OpinionatedReconciler,
  type OpinionatedReconcilerOptions,
  type OpinionatedReconcilerState,
} from './opinionated-reconciler.ts';
export { OpinionatedWatcher, type OpinionatedWatcherOptions } from './opinionated-watcher.ts';
export { reconcileStateOf, withReconcileState } from './reconcile-state.ts';
export {
  defaultWatcherRetryPolicy,
  generationOf,
  opinionatedRetryDequeuePolicy,
} from './retry-dequeue-policy.ts';
export type {
  EventReconcileReturn,
  EventReconciler,
  PendingRetry,
  ReconcileRequest,
  ReconcileResult,
  ResourceAction,
  ResourceWatcher,
  RetryDequeuePolicy,
  WatcherContext,
} from './types.ts';
