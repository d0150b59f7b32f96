import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, formatTime, parseDuration, parseTime } from './well-known.ts';

describe('durations as Go prints and parses them', () => {
  it.each([
    [0n, '0s'],
    [1n, '1ns'],
    [1_500n, '1.5µs'],
    [300_000_000n, '300ms'],
    [1_500_000_000n, '1.5s'],
    [90_000_000_000n, '1m30s'],
    [3_600_000_000_000n, '1h0m0s'],
    [-3_600_000_000_000n, '-1h0m0s'],
  ])('%s ns is %s', (ns, text) => {
    expect(formatDuration(ns)).toBe(text);
    expect(parseDuration(text)).toBe(ns);
  });

  it('rejects what time.ParseDuration rejects', () => {
    for (const bad of ['', '1', 'h', '1x', '1h ', '--1s']) expect(parseDuration(bad)).toBeUndefined();
  });

  it('round-trips any duration', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), (ns) => {
        expect(parseDuration(formatDuration(ns))).toBe(ns);
      }),
    );
  });
});

describe('times', () => {
  it('prints Time at second precision and MicroTime with six digits, in UTC', () => {
    const at = parseTime('2024-02-03T04:05:06.789123+01:00');
    expect(at).toEqual({ seconds: 1_706_929_506n, nanos: 789_123_000 });
    expect(formatTime(1_706_929_506n, 789_123_000, false)).toBe('2024-02-03T03:05:06Z');
    expect(formatTime(1_706_929_506n, 789_123_000, true)).toBe('2024-02-03T03:05:06.789123Z');
    expect(parseTime('yesterday')).toBeUndefined();
  });
});
