import {
  findInCauseChain,
  InvalidResultError,
  NonErrorThrownError,
  RequeueAfterError,
  TerminalError,
} from './errors.ts';
import { isResult } from './result.ts';

/** How a reconcile ended: the value it returned or what it threw. */
export type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

/**
 * What the controller does with a request after its reconcile, in the order decided by
 * seed-semantics D1–D6:
 * - `success`: forget failures, done;
 * - `requeue`: requeue through the rate limiter (failures kept);
 * - `requeueAfter`: forget failures, requeue after `afterMs`;
 * - `requeueNow`: requeue at once, failures kept;
 * - `terminal`: forget, done, never retried;
 * - `error`: ask the retry policy.
 */
export type Classification =
  | { readonly kind: 'success' }
  | { readonly kind: 'requeue' }
  | { readonly kind: 'requeueAfter'; readonly afterMs: number }
  | { readonly kind: 'requeueNow' }
  | { readonly kind: 'terminal'; readonly error: Error }
  | { readonly kind: 'error'; readonly error: Error };

/**
 * Classifies a reconcile's outcome. Errors beat results: a reconcile that throws never has its
 * result seen. Among errors, the first `TerminalError` or `RequeueAfterError` found in the cause
 * chain (outermost first) decides; any other thrown value, Error or not, is a retryable error.
 */
export function classify(outcome: Outcome): Classification {
  if (!outcome.ok) {
    const signal = findInCauseChain(
      outcome.error,
      (e): e is TerminalError | RequeueAfterError =>
        e instanceof TerminalError || e instanceof RequeueAfterError,
    );
    if (signal instanceof RequeueAfterError) {
      return signal.afterMs > 0 ? { kind: 'requeueAfter', afterMs: signal.afterMs } : { kind: 'requeueNow' };
    }
    if (signal instanceof TerminalError) return { kind: 'terminal', error: toError(outcome.error) };
    return { kind: 'error', error: toError(outcome.error) };
  }
  const value = outcome.value;
  if (value === undefined) return { kind: 'success' };
  if (!isResult(value)) return { kind: 'error', error: new InvalidResultError(value) };
  switch (value.kind) {
    case 'done':
      return { kind: 'success' };
    case 'requeue':
      return { kind: 'requeue' };
    case 'requeueAfter':
      return value.afterMs > 0 ? { kind: 'requeueAfter', afterMs: value.afterMs } : { kind: 'requeueNow' };
    case 'requeueNow':
      return { kind: 'requeueNow' };
  }
}

/** Errors pass through; anything else thrown is wrapped so logs and policies always see an Error. */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new NonErrorThrownError(value);
}
