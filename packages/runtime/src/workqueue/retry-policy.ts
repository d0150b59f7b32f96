import { integer, positiveDurationMs } from '../options.ts';

/**
 * What to do with a key whose reconcile failed with a retryable error.
 * - `{ retry: false }`: drop it and forget its failures (it runs again on its next add);
 * - `{ retry: true }`: requeue it through the queue's rate limiter;
 * - `{ retry: true, delayMs }`: requeue it after exactly `delayMs` (the limiter still counts it).
 */
export type RetryDecision = { readonly retry: false } | { readonly retry: true; readonly delayMs?: number };

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
