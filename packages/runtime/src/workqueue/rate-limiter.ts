import type { Clock } from '../clock/index.ts';
import { realClock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import { durationMs, integer, positiveNumber } from '../options.ts';

/**
 * Decides how long a key waits before it is retried (client-go's `RateLimiter`). Keys are the
 * queue's string ids.
 */
export interface RateLimiter {
  /** The delay for the next retry of `id`; counts one more requeue. */
  when(id: string): number;
  /** Resets what is known about `id` (after a success, or when retries are given up). */
  forget(id: string): void;
  /** How many times `when(id)` was called since the last `forget(id)`. */
  numRequeues(id: string): number;
}

export interface ExponentialRateLimiterOptions {
  /** Delay of the first retry. Default 5 ms. */
  readonly baseDelayMs?: number;
  /** Cap on the delay. Default 1 000 000 ms (1000 s). */
  readonly maxDelayMs?: number;
}

/**
 * Per-key exponential backoff: the n-th consecutive requeue (n from 0) waits
 * `baseDelayMs · 2^n`, capped at `maxDelayMs` (client-go `ItemExponentialFailureRateLimiter`).
 */
export class ExponentialRateLimiter implements RateLimiter {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly #failures = new Map<string, number>();

  constructor(options: ExponentialRateLimiterOptions = {}) {
    this.baseDelayMs = durationMs('baseDelayMs', options.baseDelayMs, 5);
    this.maxDelayMs = durationMs('maxDelayMs', options.maxDelayMs, 1_000_000);
    if (this.maxDelayMs < this.baseDelayMs) {
      throw new OptionsError(
        'maxDelayMs',
        this.maxDelayMs,
        `a duration >= baseDelayMs (${this.baseDelayMs})`,
      );
    }
  }

  when(id: string): number {
    const n = this.#failures.get(id) ?? 0;
    this.#failures.set(id, n + 1);
    // A zero base stays zero (0 · 2^n would be NaN once 2^n overflows to Infinity past n = 1023);
    // otherwise an overflow to Infinity is capped like any other long delay.
    if (this.baseDelayMs === 0) return 0;
    return Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
  }

  forget(id: string): void {
    this.#failures.delete(id);
  }

  numRequeues(id: string): number {
    return this.#failures.get(id) ?? 0;
  }
}

export interface BucketRateLimiterOptions {
  /** Tokens added per second. Default 10. */
  readonly qps?: number;
  /** Bucket size. Default 100. */
  readonly burst?: number;
  /** Clock for the refill. Default the real clock. */
  readonly clock?: Clock;
}

/**
 * A global token bucket shared by all keys (client-go `BucketRateLimiter`, golang.org/x/time/rate
 * `Reserve`): each `when` takes one token; when the bucket is empty the caller waits until its
 * token would have been added. Tokens may go negative, so the waits of a burst queue up.
 */
export class BucketRateLimiter implements RateLimiter {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.qps = positiveNumber('qps', options.qps, 10);
    this.burst = integer('burst', options.burst, 100, 1);
    this.#clock = options.clock ?? realClock;
    this.#tokens = this.burst;
    this.#last = this.#clock.now();
  }

  when(_id: string): number {
    const now = this.#clock.now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.qps) / 1000);
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.qps;
  }

  forget(_id: string): void {}

  numRequeues(_id: string): number {
    return 0;
  }
}

/**
 * The largest delay of several limiters; `numRequeues` is the largest count (client-go
 * `MaxOfRateLimiter`).
 */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new OptionsError('limiters', limiters, 'at least one rate limiter');
    this.#limiters = limiters;
  }

  when(id: string): number {
    let delay = 0;
    for (const l of this.#limiters) delay = Math.max(delay, l.when(id));
    return delay;
  }

  forget(id: string): void {
    for (const l of this.#limiters) l.forget(id);
  }

  numRequeues(id: string): number {
    let n = 0;
    for (const l of this.#limiters) n = Math.max(n, l.numRequeues(id));
    return n;
  }
}

/** The default: per-key exponential backoff, 5 ms → 1000 s. */
export function defaultRateLimiter(): RateLimiter {
  return new ExponentialRateLimiter();
}

/**
 * controller-runtime's default controller limiter: max(exponential 5 ms → 1000 s, token bucket
 * 10 qps burst 100).
 */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(new ExponentialRateLimiter(), new BucketRateLimiter({ clock }));
}

/**
 * kro's dynamic-controller limiter: max(exponential 200 ms → 1000 s per key, token bucket 10 qps
 * burst 100 shared by every key).
 */
export function kroRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter(
    new ExponentialRateLimiter({ baseDelayMs: 200, maxDelayMs: 1_000_000 }),
    new BucketRateLimiter({ clock }),
  );
}
