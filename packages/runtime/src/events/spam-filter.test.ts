import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpamFilter } from './spam-filter.ts';

describe('SpamFilter', () => {
  it('lets a burst through per object, then one per refill interval', () => {
    const filter = new SpamFilter(3, 1 / 300, 10);
    expect([1, 2, 3, 4].map(() => filter.allow('a', 0))).toEqual([true, true, true, false]);
    expect(filter.allow('b', 0)).toBe(true);
    expect(filter.allow('a', 299_999)).toBe(false);
    expect(filter.allow('a', 300_000)).toBe(true);
    expect(filter.allow('a', 300_000)).toBe(false);
  });

  it('never holds more than burst tokens, however long an object stays quiet', () => {
    const filter = new SpamFilter(2, 1, 10);
    filter.allow('a', 0);
    expect([1, 2, 3].map(() => filter.allow('a', 1_000_000))).toEqual([true, true, false]);
  });

  it('never allows more than burst + elapsed × qps for one object', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.nat(100_000), { maxLength: 200 }),
        (burst, gaps) => {
          const filter = new SpamFilter(burst, 1 / 300, 10);
          let now = 0;
          let allowed = 0;
          for (const gap of gaps) {
            now += gap;
            if (filter.allow('a', now)) allowed++;
          }
          expect(allowed).toBeLessThanOrEqual(burst + Math.floor(now / 300_000));
        },
      ),
    );
  });

  it('keeps at most maxObjects buckets, forgetting the least recently used', () => {
    const filter = new SpamFilter(1, 1 / 300, 2);
    filter.allow('a', 0);
    filter.allow('b', 0);
    filter.allow('a', 0);
    filter.allow('c', 0);
    expect(filter.size).toBe(2);
    expect(filter.allow('a', 0)).toBe(false);
    expect(filter.allow('b', 0)).toBe(true);
  });
});
