import type { Clock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { Cause } from './cause.ts';
import type { WorkQueueMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** Priorities of adds. Higher runs first; any finite number is allowed. */
export const Priority = Object.freeze({
  /** Keys a user is waiting on. */
  high: 100,
  /** The default. */
  normal: 0,
  /** Initial-list and resync adds, so a backlog never delays fresh changes. */
  low: -100,
});

export interface AddOptions {
  /** Higher is served first. Default {@link Priority.normal}. A queued key keeps the highest it was given. */
  readonly priority?: number;
  /**
   * Why the key is added. The key's next run gets it (see `causesOf`) together with the causes of
   * the other adds it absorbs. Default: `{ type: 'manual' }` (`retry` for `addRateLimited`). An
   * add the queue ignores (after shutdown, while a hold waits, while processing without
   * coalescing) drops its cause too.
   */
  readonly cause?: Cause;
}

export interface AddAfterOptions extends AddOptions {
  /**
   * openclarity's "not superseded" semantics for this delayed add: a no-op if the key is queued,
   * processing or waiting; while it waits, plain adds and other delayed adds of the key are
   * ignored until the timer fires. Default: the queue's `hold` option.
   */
  readonly hold?: boolean;
}

export interface RateLimitedOptions extends AddOptions {
  /** Wait exactly this long instead of the limiter's delay; the limiter still counts the requeue. */
  readonly delayMs?: number;
}

/** Options of `requeueAfter` and `requeueRateLimited`, which finish a processing key. */
export interface RequeueOptions extends AddAfterOptions {
  /**
   * Hand the causes of the run that is finishing on to the run this requeue leads to, before any
   * cause that arrived since (a retried reconcile still knows what it was retrying). Default false.
   */
  readonly keepCauses?: boolean;
}

export interface WorkQueueOptions<K> {
  /** Name used in metrics and logs. Default 'workqueue'. */
  readonly name?: string;
  /**
   * Identity of a key. Keys with the same id are the same key. Default: the key itself for
   * strings, JSON with sorted object keys otherwise (`requestKey`).
   */
  readonly keyOf?: (key: K) => string;
  /**
   * Fairness partition of a key (for example its kind or namespace). Ready keys are served
   * round-robin across partitions. Default: one partition.
   */
  readonly partitionOf?: (key: K) => string;
  /**
   * Initial concurrency limits by partition: at most this many keys of the partition processing
   * at once (integers >= 1). Ready keys of a partition at its limit stay queued while other
   * partitions are served. Change them later with `setPartitionLimit`. Default: no limits.
   */
  readonly partitionLimits?: Readonly<Record<string, number>>;
  /** Clock for delayed adds and timings. Default the real clock. */
  readonly clock?: Clock;
  /** Backoff for `addRateLimited`. Default exponential 5 ms → 1000 s per key. */
  readonly rateLimiter?: RateLimiter;
  /** Make every delayed add a hold (openclarity). Default false (client-go: earliest deadline wins). */
  readonly hold?: boolean;
  /**
   * What an add of a key that is processing does. true (default, client-go): the key runs exactly
   * once more after `done`. false (openclarity): the add is dropped.
   */
  readonly coalesceWhileProcessing?: boolean;
  /** Metrics hooks. */
  readonly metrics?: WorkQueueMetrics;
  /**
   * Causes kept per key and run (`causesOf`): the most recent distinct ones; older ones are let go
   * and counted. 0 keeps none (every run gets no causes). Default 8.
   */
  readonly maxCausesPerKey?: number;
}

export function priorityOption(value: number | undefined): number {
  if (value === undefined) return Priority.normal;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new OptionsError('priority', value, 'a finite number');
  }
  return value;
}

export function delayOption(value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value === Number.POSITIVE_INFINITY) {
    throw new OptionsError('delayMs', value, 'a finite number of milliseconds');
  }
  return value;
}

export function booleanOption(field: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new OptionsError(field, value, 'a boolean');
  return value;
}

/** A partition's concurrency limit: an integer >= 1 (or undefined for none, where `optional`). */
export function partitionLimitOption(field: string, value: unknown, optional: boolean): number | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new OptionsError(field, value, optional ? 'an integer >= 1 or undefined' : 'an integer >= 1');
  }
  return value;
}

/** The `partitionLimits` option as a list of partition and limit. */
export function partitionLimitsOption(
  value: Readonly<Record<string, number>> | undefined,
): { readonly partition: string; readonly limit: number }[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError('partitionLimits', value, 'an object of partition to limit');
  }
  return Object.entries(value).map(([partition, limit]) => ({
    partition,
    limit: partitionLimitOption(`partitionLimits.${partition}`, limit, false) as number,
  }));
}
