/**
 * The work queue: deduplicating, exclusive, delayed, rate-limited, prioritised and fair across
 * partitions. See {@link WorkQueue}.
 *
 * Partitions (`partitionOf`, for example a kind) are served round-robin, and each may have a
 * concurrency limit (`partitionLimits`, `setPartitionLimit`): at most N of its keys processing
 * at once, so one kind cannot take every worker of a pool shared by many. The ready keys of a
 * partition at its limit keep their place and do not hold up other partitions; `length` counts
 * them, `lengthIn` and `processingIn` give the figures of one partition.
 *
 * Every add may carry a {@link Cause} (why the key was added); a run gets the causes of the adds
 * its key absorbed since its previous hand-out (`causesOf`), capped per key.
 *
 * @module
 */
export {
  type Cause,
  type CauseObject,
  type CauseSet,
  type CauseType,
  type CauseWriter,
  formatCause,
  formatWriter,
  MAX_CHAIN_LINKS,
  manualCause,
  noCauses,
  requeueAfterCause,
  retryCause,
  sameCause,
} from './cause.ts';
export {
  causeChain,
  chainDepth,
  chainOf,
  chainReaches,
  chainWriterOf,
  followedEcho,
  limitLinks,
} from './cause-chain.ts';
export { joinHooks, type WorkQueueKeyInfo, type WorkQueueMetrics, type WorkQueueStats } from './metrics.ts';
export { WorkQueue } from './queue.ts';
export {
  type AddAfterOptions,
  type AddOptions,
  Priority,
  type RateLimitedOptions,
  type RequeueOptions,
  type WorkQueueOptions,
} from './queue-options.ts';
export {
  BucketRateLimiter,
  type BucketRateLimiterOptions,
  defaultControllerRateLimiter,
  defaultRateLimiter,
  ExponentialRateLimiter,
  type ExponentialRateLimiterOptions,
  kroRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from './rate-limiter.ts';
export {
  exponentialBackoffRetryPolicy,
  kroRetryPolicy,
  maxRetries,
  noRetries,
  notFoundAsSuccess,
  type RetryContext,
  type RetryDecision,
  type RetryPolicy,
  unlimitedRetries,
} from './retry-policy.ts';
