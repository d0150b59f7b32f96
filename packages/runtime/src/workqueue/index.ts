/**
 * The work queue: deduplicating, exclusive, delayed, rate-limited, prioritised and fair across
 * partitions. See {@link WorkQueue}.
 *
 * @module
 */
export type { WorkQueueMetrics, WorkQueueStats } from './metrics.ts';
export { WorkQueue } from './queue.ts';
export {
  type AddAfterOptions,
  type AddOptions,
  Priority,
  type RateLimitedOptions,
  type WorkQueueOptions,
} from './queue-options.ts';
export {
  BucketRateLimiter,
  type BucketRateLimiterOptions,
  defaultControllerRateLimiter,
  defaultRateLimiter,
  ExponentialRateLimiter,
  type ExponentialRateLimiterOptions,
  MaxOfRateLimiter,
  type RateLimiter,
} from './rate-limiter.ts';
export {
  exponentialBackoffRetryPolicy,
  maxRetries,
  noRetries,
  type RetryContext,
  type RetryDecision,
  type RetryPolicy,
  unlimitedRetries,
} from './retry-policy.ts';
