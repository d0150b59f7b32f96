import { describe, expect, it } from 'vitest';
import { eventData, seriesKey } from './event-data.ts';
import { SeriesCache, type SeriesEntry } from './series-cache.ts';

function entry(reason: string, at: number): SeriesEntry {
  const data = eventData({ kind: 'K', metadata: { name: 'n' } }, 'Normal', reason, 'Act', '', undefined);
  return {
    key: seriesKey(data),
    data,
    name: `n.${reason}`,
    firstAt: at,
    count: 1,
    lastObservedAt: at,
    stored: false,
    writtenCount: 0,
    lastWriteAt: at,
    state: 'idle',
  };
}

describe('SeriesCache', () => {
  it('finds an entry while its series is open and not once the window passed since the last occurrence', () => {
    const cache = new SeriesCache(10, 1000);
    const a = entry('A', 0);
    cache.add(a);
    cache.observe(a, 900);
    expect(cache.lookup(a.key, 1899)).toBe(a);
    expect(cache.lookup(a.key, 1900)).toBeUndefined();
    expect(a.count).toBe(2);
  });

  it('evicts the least recently observed entry past maxEntries and returns it', () => {
    const cache = new SeriesCache(2, 1000);
    const [a, b, c] = [entry('A', 0), entry('B', 1), entry('C', 2)];
    cache.add(a);
    cache.add(b);
    cache.observe(a, 3);
    expect(cache.add(c)).toEqual([b]);
    expect([...cache.values()]).toEqual([a, c]);
    expect(cache.has(b)).toBe(false);
  });

  it('expires ended series oldest first and keeps open ones', () => {
    const cache = new SeriesCache(10, 1000);
    const [a, b] = [entry('A', 0), entry('B', 500)];
    cache.add(a);
    cache.add(b);
    expect(cache.expire(1000)).toEqual([a]);
    expect(cache.size).toBe(1);
  });

  it('replaces an ended series of the same key and returns the old entry', () => {
    const cache = new SeriesCache(10, 1000);
    const old = entry('A', 0);
    const fresh = entry('A', 5000);
    cache.add(old);
    expect(cache.add(fresh)).toEqual([old]);
    expect(cache.lookup(fresh.key, 5000)).toBe(fresh);
  });
});
