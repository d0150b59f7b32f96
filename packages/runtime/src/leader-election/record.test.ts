import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMicroTime, parseMicroTime } from './record.ts';

describe('MicroTime', () => {
  it('formats epoch milliseconds as RFC 3339 UTC with six fractional digits', () => {
    expect(formatMicroTime(1_700_000_000_123)).toBe('2023-11-14T22:13:20.123000Z');
    expect(formatMicroTime(0)).toBe('1970-01-01T00:00:00.000000Z');
  });

  it('round-trips every millisecond between 1970 and 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        expect(parseMicroTime(formatMicroTime(ms))).toBe(ms);
      }),
    );
  });

  it('parses times with offsets, without fraction, and with nanoseconds (truncated to ms)', () => {
    expect(parseMicroTime('2023-11-14T23:13:20.5+01:00')).toBe(1_700_000_000_500);
    expect(parseMicroTime('2023-11-14T22:13:20Z')).toBe(1_700_000_000_000);
    expect(parseMicroTime('2023-11-14T22:13:20.123456789Z')).toBe(1_700_000_000_123);
  });

  it('rejects text that is not an RFC 3339 time', () => {
    for (const bad of ['', 'yesterday', '2023-11-14', '2023-11-14T22:13:20', '2023-13-45T22:13:20Z']) {
      expect(parseMicroTime(bad)).toBeUndefined();
    }
  });

  it('refuses to format a non-finite time', () => {
    expect(() => formatMicroTime(Number.NaN)).toThrow(RangeError);
  });
});
