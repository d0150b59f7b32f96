import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultRateLimiter,
  ExponentialRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from './rate-limiter.ts';

function optionsErrorOf(fn: () => unknown): OptionsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError, nothing was thrown');
}

const times = (limiter: RateLimiter, id: string, n: number): number[] =>
  Array.from({ length: n }, () => limiter.when(id));

describe('ExponentialRateLimiter (C1)', () => {
  it('the n-th consecutive requeue waits 5 ms · 2^n by default', () => {
    expect(times(new ExponentialRateLimiter(), 'a', 6)).toEqual([5, 10, 20, 40, 80, 160]);
  });

  it('the delay is capped at 1000 s by default', () => {
    const limiter = new ExponentialRateLimiter();
    const delays = times(limiter, 'a', 30);
    // 5 · 2^17 = 655 360 ms is the last delay under the cap, 5 · 2^18 is past it.
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays.slice(18).every((d) => d === 1_000_000)).toBe(true);
  });

  it('a huge number of requeues never overflows to Infinity or NaN', () => {
    const limiter = new ExponentialRateLimiter({ baseDelayMs: 1, maxDelayMs: 60_000 });
    const delays = times(limiter, 'a', 2000);
    expect(delays.every((d) => Number.isFinite(d))).toBe(true);
    expect(delays.at(-1)).toBe(60_000);
    expect(limiter.numRequeues('a')).toBe(2000);
  });

  it('a base delay of zero stays zero however many requeues there were', () => {
    const limiter = new ExponentialRateLimiter({ baseDelayMs: 0, maxDelayMs: 1000 });
    expect(times(limiter, 'a', 1100).every((d) => d === 0)).toBe(true);
  });

  it('custom base and cap are honoured', () => {
    const limiter = new ExponentialRateLimiter({ baseDelayMs: 200, maxDelayMs: 1000 });
    expect(times(limiter, 'a', 5)).toEqual([200, 400, 800, 1000, 1000]);
  });

  it('keys back off independently', () => {
    const limiter = new ExponentialRateLimiter();
    limiter.when('a');
    limiter.when('a');
    expect(limiter.when('b')).toBe(5);
    expect(limiter.when('a')).toBe(20);
  });

  it('numRequeues counts the requeues of a key and forget resets it to the base delay (C2)', () => {
    const limiter = new ExponentialRateLimiter();
    times(limiter, 'a', 3);
    limiter.when('b');
    expect(limiter.numRequeues('a')).toBe(3);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.numRequeues('b')).toBe(1);
    expect(limiter.when('a')).toBe(5);
  });

  it('rejects invalid durations with an OptionsError naming the field', () => {
    const cases: [string, () => unknown][] = [
      ['baseDelayMs', () => new ExponentialRateLimiter({ baseDelayMs: Number.NaN })],
      ['baseDelayMs', () => new ExponentialRateLimiter({ baseDelayMs: -1 })],
      ['baseDelayMs', () => new ExponentialRateLimiter({ baseDelayMs: Number.POSITIVE_INFINITY })],
      ['maxDelayMs', () => new ExponentialRateLimiter({ maxDelayMs: -5 })],
      ['maxDelayMs', () => new ExponentialRateLimiter({ maxDelayMs: Number.NaN })],
      ['maxDelayMs', () => new ExponentialRateLimiter({ baseDelayMs: 100, maxDelayMs: 50 })],
    ];
    for (const [field, make] of cases) expect(optionsErrorOf(make).field).toBe(field);
  });
});

describe('BucketRateLimiter (C1)', () => {
  it('with 10 qps and burst 100, the first 100 requeues are immediate and the next ones 100 ms apart', () => {
    const clock = new VirtualClock();
    const limiter = new BucketRateLimiter({ qps: 10, burst: 100, clock });
    expect(times(limiter, 'x', 100).every((d) => d === 0)).toBe(true);
    expect(times(limiter, 'x', 3).map((d) => Math.round(d))).toEqual([100, 200, 300]);
  });

  it('defaults to 10 qps and burst 100', () => {
    const limiter = new BucketRateLimiter({ clock: new VirtualClock() });
    expect(limiter.qps).toBe(10);
    expect(limiter.burst).toBe(100);
  });

  it('the bucket refills at qps over virtual time, up to the burst', async () => {
    const clock = new VirtualClock();
    const limiter = new BucketRateLimiter({ qps: 10, burst: 5, clock });
    times(limiter, 'x', 5);
    await clock.advance(300);
    expect(times(limiter, 'x', 3)).toEqual([0, 0, 0]);
    expect(Math.round(limiter.when('x'))).toBe(100);
    await clock.advance(60_000);
    expect(times(limiter, 'x', 5).every((d) => d === 0)).toBe(true);
    expect(Math.round(limiter.when('x'))).toBe(100);
  });

  it('waits queue up when the bucket is overdrawn, and time pays the debt back', async () => {
    const clock = new VirtualClock();
    const limiter = new BucketRateLimiter({ qps: 2, burst: 1, clock });
    expect(limiter.when('x')).toBe(0);
    expect(limiter.when('x')).toBe(500);
    expect(limiter.when('x')).toBe(1000);
    await clock.advance(1000);
    expect(limiter.when('x')).toBe(500);
  });

  it('is shared by all keys, counts no requeues and has nothing to forget', () => {
    const limiter = new BucketRateLimiter({ qps: 1, burst: 1, clock: new VirtualClock() });
    expect(limiter.when('a')).toBe(0);
    expect(limiter.when('b')).toBe(1000);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(2000);
  });

  it('rejects burst 0, qps <= 0 and non-finite qps with an OptionsError naming the field', () => {
    const cases: [string, () => unknown][] = [
      ['burst', () => new BucketRateLimiter({ burst: 0 })],
      ['burst', () => new BucketRateLimiter({ burst: 2.5 })],
      ['qps', () => new BucketRateLimiter({ qps: 0 })],
      ['qps', () => new BucketRateLimiter({ qps: -1 })],
      ['qps', () => new BucketRateLimiter({ qps: Number.NaN })],
      ['qps', () => new BucketRateLimiter({ qps: Number.POSITIVE_INFINITY })],
    ];
    for (const [field, make] of cases) expect(optionsErrorOf(make).field).toBe(field);
  });
});

describe('MaxOfRateLimiter (C1)', () => {
  it('waits the largest delay of its limiters', () => {
    const clock = new VirtualClock();
    const limiter = new MaxOfRateLimiter(
      new ExponentialRateLimiter({ baseDelayMs: 200, maxDelayMs: 1_000_000 }),
      new BucketRateLimiter({ qps: 10, burst: 1, clock }),
    );
    // Exponential: 200, 400, 800; bucket: 0, 100, 200.
    expect(times(limiter, 'a', 3)).toEqual([200, 400, 800]);
    // The bucket is overdrawn by now: key b's first requeue waits for the bucket, not 200 ms.
    expect(Math.round(limiter.when('b'))).toBe(300);
    expect(Math.round(limiter.when('c'))).toBe(400);
  });

  it('numRequeues is the largest count and forget reaches every limiter', () => {
    const inner = new ExponentialRateLimiter();
    const limiter = new MaxOfRateLimiter(inner, new BucketRateLimiter({ clock: new VirtualClock() }));
    times(limiter, 'a', 4);
    expect(limiter.numRequeues('a')).toBe(4);
    limiter.forget('a');
    expect(inner.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
  });

  it('needs at least one limiter', () => {
    expect(optionsErrorOf(() => new MaxOfRateLimiter()).field).toBe('limiters');
  });
});

describe('default limiters', () => {
  it('the default limiter is exponential from 5 ms to 1000 s', () => {
    const limiter = defaultRateLimiter();
    expect(limiter).toBeInstanceOf(ExponentialRateLimiter);
    expect(times(limiter, 'a', 3)).toEqual([5, 10, 20]);
  });

  it('the default controller limiter also applies a 10 qps burst 100 bucket across keys', () => {
    const limiter = defaultControllerRateLimiter(new VirtualClock());
    for (let i = 0; i < 100; i++) expect(limiter.when(`k${i}`)).toBe(5);
    expect(Math.round(limiter.when('k100'))).toBe(100);
  });
});
