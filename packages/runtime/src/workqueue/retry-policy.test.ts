import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../backend/errors.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { WorkQueue } from './queue.ts';
import { ExponentialRateLimiter, kroRateLimiter } from './rate-limiter.ts';
import {
  exponentialBackoffRetryPolicy,
  kroRetryPolicy,
  maxRetries,
  noRetries,
  notFoundAsSuccess,
  type RetryPolicy,
  unlimitedRetries,
} from './retry-policy.ts';

function optionsErrorOf(fn: () => unknown): OptionsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError, nothing was thrown');
}

interface Run {
  /** Virtual times (ms) at which the key was processed. */
  readonly calls: number[];
  readonly q: WorkQueue<string>;
  readonly clock: VirtualClock;
}

/**
 * Drives a queue the way a controller worker does: get, run, then on failure ask the policy
 * (`failures` = numRequeues) and either requeueRateLimited or forget + done; on success forget +
 * done. Stops when nothing is queued or waiting, or after `maxCalls`.
 */
async function drive(
  policy: RetryPolicy,
  fails: (call: number) => boolean,
  options: { readonly q?: WorkQueue<string>; readonly clock?: VirtualClock; readonly maxCalls?: number } = {},
): Promise<Run> {
  const clock = options.clock ?? new VirtualClock();
  const q = options.q ?? new WorkQueue<string>({ clock });
  const calls: number[] = [];
  if (options.q === undefined) q.add('key');
  while (calls.length < (options.maxCalls ?? 100)) {
    const key = q.tryGet();
    if (key === undefined) {
      const next = clock.nextTimerAt();
      if (next === undefined) break;
      await clock.advanceTo(next);
      continue;
    }
    calls.push(clock.now());
    if (!fails(calls.length)) {
      q.forget(key);
      q.done(key);
      continue;
    }
    const decision = policy.decide({ failures: q.numRequeues(key), error: new Error('boom') });
    if (decision.retry) {
      q.requeueRateLimited(key, decision.delayMs === undefined ? {} : { delayMs: decision.delayMs });
    } else {
      q.forget(key);
      q.done(key);
    }
  }
  return { calls, q, clock };
}

const always = (): boolean => true;
const gaps = (calls: readonly number[]): number[] => calls.slice(1).map((t, i) => t - (calls[i] as number));

describe('retry policies driving a queue (C3, C4)', () => {
  it('maxRetries(n) processes a key that always fails 1 + n times, then drops it (kro counting)', async () => {
    for (const n of [0, 1, 2, 5]) {
      const { calls, q } = await drive(maxRetries(n), always);
      expect(calls).toHaveLength(1 + n);
      expect(q.has('key')).toBe(false);
      expect(q.numRequeues('key')).toBe(0);
    }
  });

  it('maxRetries(2) retries after the rate limiter delays, 5 ms then 10 ms', async () => {
    const { calls } = await drive(maxRetries(2), always);
    expect(calls).toEqual([0, 5, 15]);
  });

  it('noRetries processes a failing key once and drops it (openclarity)', async () => {
    const { calls, q } = await drive(noRetries, always);
    expect(calls).toEqual([0]);
    expect(q.has('key')).toBe(false);
  });

  it('unlimitedRetries keeps retrying with exponential backoff up to the cap', async () => {
    const clock = new VirtualClock();
    const q = new WorkQueue<string>({
      clock,
      rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 100, maxDelayMs: 1000 }),
    });
    q.add('key');
    const { calls } = await drive(unlimitedRetries, always, { q, clock, maxCalls: 30 });
    expect(calls).toHaveLength(30);
    expect(gaps(calls).slice(0, 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(q.has('key')).toBe(true);
  });

  it('exponentialBackoffRetryPolicy(5000, 5) makes exactly 7 calls, retrying after 5, 10, 20, 40, 80 and 160 s', async () => {
    const { calls, q } = await drive(exponentialBackoffRetryPolicy(5000, 5), always);
    expect(calls).toHaveLength(7);
    expect(gaps(calls)).toEqual([5000, 10_000, 20_000, 40_000, 80_000, 160_000]);
    expect(q.has('key')).toBe(false);
  });

  it('exponentialBackoffRetryPolicy(1000, 5) retries at +1, +3 and +7 s after the first failure (grafana)', async () => {
    const { calls } = await drive(exponentialBackoffRetryPolicy(1000, 5), always);
    expect(calls.slice(1, 4)).toEqual([1000, 3000, 7000]);
    expect(calls).toHaveLength(7);
  });

  it('a success resets the failure count, so the next failure starts from the base delay again (C2)', async () => {
    // Calls 1-3 fail, 4 succeeds; then a new add, and call 5 fails.
    const clock = new VirtualClock();
    const q = new WorkQueue<string>({ clock });
    q.add('key');
    const first = await drive(maxRetries(10), (n) => n <= 3, { q, clock });
    expect(gaps(first.calls)).toEqual([5, 10, 20]);
    expect(q.numRequeues('key')).toBe(0);
    q.add('key');
    const second = await drive(maxRetries(10), (n) => n === 1, { q, clock });
    expect(gaps(second.calls)).toEqual([5]);
  });

  it('a key dropped after max retries runs again only on a new add, with its failure count back at 0 (C4)', async () => {
    const clock = new VirtualClock();
    const q = new WorkQueue<string>({ clock });
    q.add('key');
    const first = await drive(maxRetries(2), always, { q, clock });
    expect(first.calls).toHaveLength(3);
    await clock.advance(10_000_000);
    expect(q.tryGet()).toBeUndefined();
    q.add('key');
    const second = await drive(maxRetries(2), always, { q, clock });
    expect(second.calls).toHaveLength(3);
    expect(gaps(second.calls)).toEqual([5, 10]);
  });
});

describe('retry policy decisions', () => {
  it('maxRetries retries while failures < max and gives up at max', () => {
    const policy = maxRetries(3);
    const decisions = [0, 1, 2, 3, 4].map((failures) => policy.decide({ failures, error: undefined }).retry);
    expect(decisions).toEqual([true, true, true, false, false]);
    expect(policy.name).toBe('max-retries(3)');
  });

  it('exponentialBackoffRetryPolicy asks for initial · 2^failures until failures exceed max', () => {
    const policy = exponentialBackoffRetryPolicy(1000, 2);
    expect([0, 1, 2, 3].map((failures) => policy.decide({ failures, error: undefined }))).toEqual([
      { retry: true, delayMs: 1000 },
      { retry: true, delayMs: 2000 },
      { retry: true, delayMs: 4000 },
      { retry: false },
    ]);
  });

  it('unlimitedRetries always retries through the limiter and noRetries never retries', () => {
    expect(unlimitedRetries.decide({ failures: 1e9, error: undefined })).toEqual({ retry: true });
    expect(noRetries.decide({ failures: 0, error: undefined })).toEqual({ retry: false });
  });

  it('rejects invalid arguments with an OptionsError naming the field', () => {
    const cases: [string, () => unknown][] = [
      ['maxRetries', () => maxRetries(-1)],
      ['maxRetries', () => maxRetries(1.5)],
      ['maxRetries', () => maxRetries(Number.NaN)],
      ['initialMs', () => exponentialBackoffRetryPolicy(Number.NaN, 1)],
      ['initialMs', () => exponentialBackoffRetryPolicy(0, 1)],
      ['initialMs', () => exponentialBackoffRetryPolicy(-5, 1)],
      ['max', () => exponentialBackoffRetryPolicy(1000, -1)],
      ['max', () => exponentialBackoffRetryPolicy(1000, Number.POSITIVE_INFINITY)],
    ];
    for (const [field, make] of cases) expect(optionsErrorOf(make).field).toBe(field);
  });
});

describe("kro's presets", () => {
  it('notFoundAsSuccess reads NotFound anywhere in the cause chain as a success and asks its policy otherwise', () => {
    const policy = notFoundAsSuccess(maxRetries(1));
    const succeeded = { retry: false, succeeded: true };
    expect(policy.decide({ failures: 0, error: new NotFoundError('gone') })).toEqual(succeeded);
    const deep = new Error('a', { cause: new Error('b', { cause: new NotFoundError('gone') }) });
    expect(policy.decide({ failures: 5, error: deep })).toEqual(succeeded);
    expect(policy.decide({ failures: 0, error: new Error('x') })).toEqual({ retry: true });
    expect(policy.decide({ failures: 1, error: new Error('x') })).toEqual({ retry: false });
    // A cause cycle ends; a thrown non-error is not NotFound.
    const loop = new Error('loop') as Error & { cause?: unknown };
    loop.cause = loop;
    expect(policy.decide({ failures: 0, error: loop })).toEqual({ retry: true });
    expect(policy.decide({ failures: 0, error: 'a string' })).toEqual({ retry: true });
    expect(policy.name).toBe('not-found-as-success(max-retries(1))');
    expect(() => notFoundAsSuccess({} as RetryPolicy)).toThrow(OptionsError);
  });

  it("kroRetryPolicy() drops after 20 retries (QueueMaxRetries), as kro's default flags do", async () => {
    const { calls } = await drive(kroRetryPolicy(), always);
    expect(calls).toHaveLength(21);
    expect(kroRetryPolicy().decide({ failures: 0, error: new NotFoundError('x') })).toEqual({
      retry: false,
      succeeded: true,
    });
  });

  it('kroRateLimiter waits 200 ms doubling to 1000 s per key, and its bucket (10 qps, burst 100) is shared', () => {
    const clock = new VirtualClock();
    const limiter = kroRateLimiter(clock);
    const delays = Array.from({ length: 15 }, () => limiter.when('a'));
    expect(delays.slice(0, 4)).toEqual([200, 400, 800, 1600]);
    expect(delays.at(-1)).toBe(1_000_000);
    limiter.forget('a');
    expect(limiter.when('a')).toBe(200);
    // The 16 calls above and 84 new keys take the burst of 100; from then on the bucket's wait
    // (100 ms more per call at 10 qps) passes each new key's 200 ms.
    for (let i = 0; i < 84; i++) expect(limiter.when(`k${i}`)).toBe(200);
    const next = Array.from({ length: 5 }, (_, i) => limiter.when(`fresh${i}`));
    expect(next).toEqual([200, 200, 300, 400, 500]);
    expect(limiter.numRequeues('a')).toBe(1);
  });
});
