import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../testing/index.ts';
import { Backoff } from './backoff.ts';

const defaults = { initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000, factor: 2, jitter: 0 };

describe('Backoff', () => {
  it('doubles from 800 ms and caps the base at 30 s', () => {
    const backoff = new Backoff(new VirtualClock(), defaults);
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays).toEqual([800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000]);
  });

  it('adds up to jitter × base drawn from the clock, so capped delays stay within [30 s, 60 s)', () => {
    const clock = new VirtualClock({ seed: 3 });
    const draws = new VirtualClock({ seed: 3 });
    const backoff = new Backoff(clock, { ...defaults, jitter: 1 });
    for (let i = 0; i < 20; i++) {
      const base = Math.min(800 * 2 ** i, 30_000);
      const delay = backoff.next();
      expect(delay).toBeCloseTo(base + draws.random() * base, 9);
      expect(delay).toBeGreaterThanOrEqual(base);
      expect(delay).toBeLessThan(2 * base);
    }
  });

  it('starts over after more than resetAfterMs without an error, and not at exactly resetAfterMs', async () => {
    const clock = new VirtualClock();
    const backoff = new Backoff(clock, defaults);
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([800, 1_600, 3_200]);
    await clock.advance(120_000);
    expect(backoff.next()).toBe(6_400);
    await clock.advance(120_001);
    expect(backoff.next()).toBe(800);
  });
});
