import { durationMs } from '../options.ts';

const resultBrand: unique symbol = Symbol.for('converge.reconcile.result');

/**
 * What a reconcile asks for next. Made only by the constructors {@link done}, {@link requeue},
 * {@link requeueAfter} and {@link requeueNow}; a reconciler may also return nothing, which is
 * `done()`.
 */
export type Result =
  | { readonly kind: 'done'; readonly [resultBrand]: true }
  | { readonly kind: 'requeue'; readonly [resultBrand]: true }
  | { readonly kind: 'requeueAfter'; readonly afterMs: number; readonly [resultBrand]: true }
  | { readonly kind: 'requeueNow'; readonly [resultBrand]: true };

export type ResultKind = Result['kind'];

const DONE: Result = Object.freeze({ kind: 'done', [resultBrand]: true as const });
const REQUEUE: Result = Object.freeze({ kind: 'requeue', [resultBrand]: true as const });
const REQUEUE_NOW: Result = Object.freeze({ kind: 'requeueNow', [resultBrand]: true as const });

/** The object is converged: forget its failures; it runs again on its next event. */
export function done(): Result {
  return DONE;
}

/**
 * Run again after the rate limiter's delay for this request (controller-runtime's
 * `Result{Requeue: true}`); failures are not forgotten, so repeated requeues back off.
 */
export function requeue(): Result {
  return REQUEUE;
}

/**
 * Run again after `ms` milliseconds (for polling external state); failures are forgotten.
 * `requeueAfter(0)` is the same as {@link requeueNow}.
 *
 * @example
 * return requeueAfter(30_000); // check the external resource again in 30 s
 */
export function requeueAfter(ms: number): Result {
  const afterMs = durationMs('requeueAfter', ms, 0);
  return Object.freeze({ kind: 'requeueAfter', afterMs, [resultBrand]: true as const });
}

/** Run again at once, without rate limiting and without forgetting failures (kro's `RequeueNeeded`). */
export function requeueNow(): Result {
  return REQUEUE_NOW;
}

/** True if `value` was made by one of the result constructors. */
export function isResult(value: unknown): value is Result {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [resultBrand]?: unknown })[resultBrand] === true
  );
}
