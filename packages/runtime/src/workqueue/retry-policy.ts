import { isNotFound } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { integer, positiveDurationMs } from '../options.ts';

/**
 * What to do with a key whose reconcile failed with a retryable error.
 * - `{ retry: false }`: drop it and forget its failures (it runs again on its next add); logged
 *   and counted as `dropped`;
 * - `{ retry: false, succeeded: true }`: the error means the work is done (kro's handlers return
 *   NotFound for an object that is gone): forget its failures as a success does, with no error
 *   logged or counted;
 * - `{ retry: true }`: requeue it through the queue's rate limiter;
 * - `{ retry: true, delayMs }`: requeue it after exactly `delayMs` (the limiter still counts it).
 */
export type RetryDecision =
  | { readonly retry: false; readonly succeeded?: boolean }
  | { readonly retry: true; readonly delayMs?: number };

/** The facts a retry policy decides on. */
export interface RetryContext {
  /** Consecutive failed attempts before this one (`queue.numRequeues(key)`): 0 on the first failure. */
  readonly failures: number;
  /** The error the reconcile failed with. */
  readonly error: unknown;
}

/** A retry policy is a value: a name for logs and a decision function. */
export interface RetryPolicy {
  readonly name: string;
  decide(context: RetryContext): RetryDecision;
}

const RETRY: RetryDecision = Object.freeze({ retry: true });
const GIVE_UP: RetryDecision = Object.freeze({ retry: false });
const SUCCEEDED: RetryDecision = Object.freeze({ retry: false, succeeded: true });

/** Retry forever through the rate limiter (controller-runtime's behaviour). The default. */
export const unlimitedRetries: RetryPolicy = Object.freeze({
  name: 'unlimited',
  decide: () => RETRY,
});

/** Never retry: log and drop (openclarity's reconciler). */
export const noRetries: RetryPolicy = Object.freeze({
  name: 'none',
  decide: () => GIVE_UP,
});

/**
 * Retry through the rate limiter while `failures < max`, then drop and forget, counted as kro's
 * `QueueMaxRetries`: a key that always fails is reconciled `1 + max` times.
 */
export function maxRetries(max: number): RetryPolicy {
  const limit = integer('maxRetries', max, 0, 0);
  return Object.freeze({
    name: `max-retries(${limit})`,
    decide: ({ failures }: RetryContext) => (failures < limit ? RETRY : GIVE_UP),
  });
}

/**
 * grafana app-sdk's `ExponentialBackoffRetryPolicy(initial, max)`: the retry with attempt number
 * `a` (from 0) waits `initialMs · 2^a` and retries stop once `a > max`. With its off-by-one kept, a
 * key that always fails is reconciled `max + 2` times: (5 s, 5) makes 7 calls, retrying after
 * 5, 10, 20, 40, 80 and 160 s.
 */
export function exponentialBackoffRetryPolicy(initialMs: number, max: number): RetryPolicy {
  const initial = positiveDurationMs('initialMs', initialMs, 1);
  const limit = integer('max', max, 0, 0);
  return Object.freeze({
    name: `exponential-backoff(${initial}ms, ${limit})`,
    decide: ({ failures }: RetryContext): RetryDecision =>
      failures > limit ? GIVE_UP : { retry: true, delayMs: initial * 2 ** failures },
  });
}

/** How deep {@link notFoundAsSuccess} follows `cause` links (a chain is never longer in practice). */
const CAUSE_DEPTH = 16;

/** True when `error` or an error in its `cause` chain is a NotFound backend error. */
function notFoundInChain(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < CAUSE_DEPTH && current !== null && typeof current === 'object'; depth++) {
    if (isNotFound(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * kro's handler contract: a reconcile that fails with NotFound (anywhere in its `cause` chain)
 * has nothing left to do, so it counts as a success; any other error is decided by `policy`
 * (default: retry forever). The requeue signals (`RequeueError`, `requeueAfter`) are read before
 * any policy, as kro checks them before NotFound.
 */
export function notFoundAsSuccess(policy: RetryPolicy = unlimitedRetries): RetryPolicy {
  if (policy === null || typeof policy !== 'object' || typeof policy.decide !== 'function') {
    throw new OptionsError('policy', policy, 'a RetryPolicy');
  }
  return Object.freeze({
    name: `not-found-as-success(${policy.name})`,
    decide: (context: RetryContext): RetryDecision =>
      notFoundInChain(context.error) ? SUCCEEDED : policy.decide(context),
  });
}

/**
 * kro's dynamic controller, whole: NotFound is a success, any other error is retried through the
 * rate limiter while `failures < max` (its `QueueMaxRetries`, default 20), then dropped. Pair it
 * with {@link kroRateLimiter} for kro's delays.
 */
export function kroRetryPolicy(max = 20): RetryPolicy {
  return notFoundAsSuccess(maxRetries(max));
}
