/**
 * Reconcilers and what they return: the {@link Reconciler} interface, the closed result
 * constructors (`done`, `requeue`, `requeueAfter`, `requeueNow`), `TerminalError` for errors that
 * must not be retried, the classification of outcomes the controller applies, and
 * {@link operationOf}, which tells from a run's causes what happened to its object (Kumori's
 * Put / Delete / Purge / Secondary).
 *
 * @module
 */
export { type Classification, classify, type Outcome, toError } from './classify.ts';
export {
  findInCauseChain,
  InvalidResultError,
  isTerminalError,
  NonErrorThrownError,
  ReconcileAbandonedError,
  ReconcileTimeoutError,
  RequeueAfterError,
  TerminalError,
} from './errors.ts';
export { operationOf, type PrimaryOperation } from './operation.ts';
export {
  type ReconcileContext,
  type ReconcileFunction,
  type ReconcileReturn,
  type Reconciler,
  reconcilerFunc,
} from './reconciler.ts';
export { done, isResult, type Result, type ResultKind, requeue, requeueAfter, requeueNow } from './result.ts';
