/**
 * Reconcilers and what they return: the {@link Reconciler} interface, the closed result
 * constructors (`done`, `requeue`, `requeueAfter`, `requeueNow`), `TerminalError` for errors that
 * must not be retried, and the classification of outcomes the controller applies.
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
export {
  type ReconcileContext,
  type ReconcileFunction,
  type ReconcileReturn,
  type Reconciler,
  reconcilerFunc,
} from './reconciler.ts';
export { done, isResult, type Result, type ResultKind, requeue, requeueAfter, requeueNow } from './result.ts';
