import { describe, expect, it } from 'vitest';
import { ageSince, formatRfc3339, humanDuration, parseRfc3339 } from './time.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

describe('humanDuration', () => {
  // apimachinery's own HumanDuration expectations (duration_test.go), in milliseconds.
  it.each([
    [S, '1s'],
    [70 * S, '70s'],
    [190 * S, '3m10s'],
    [70 * M, '70m'],
    [47 * H, '47h'],
    [49 * H, '2d1h'],
    [(8 * 24 + 2) * H, '8d'],
    [367 * D, '367d'],
    [(365 * 2 * 24 + 25) * H, '2y1d'],
    [(365 * 8 * 24 + 2) * H, '8y'],
    [-2 * S, '<invalid>'],
    [-2 * S + 1, '0s'],
    [0, '0s'],
    [S - 1, '0s'],
    [2 * M - 1, '119s'],
    [2 * M, '2m'],
    [2 * M + S, '2m1s'],
    [10 * M - 1, '9m59s'],
    [10 * M, '10m'],
    [10 * M + S, '10m'],
    [3 * H - 1, '179m'],
    [3 * H, '3h'],
    [3 * H + M, '3h1m'],
    [8 * H - 1, '7h59m'],
    [8 * H, '8h'],
    [8 * H + 59 * M, '8h'],
    [2 * D - 1, '47h'],
    [2 * D, '2d'],
    [2 * D + H, '2d1h'],
    [8 * D - 1, '7d23h'],
    [8 * D, '8d'],
    [8 * D + 23 * H, '8d'],
    [2 * Y - 1, '729d'],
    [2 * Y, '2y'],
    [2 * Y + 23 * H + 59 * M, '2y'],
    [2 * Y + D - 1, '2y'],
    [2 * Y + D, '2y1d'],
    [7 * Y, '7y'],
    [8 * Y - 1, '7y364d'],
    [8 * Y, '8y'],
    [8 * Y + 364 * D, '8y'],
    [9 * Y, '9y'],
  ])('%d ms reads %s', (ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });
});

describe('parseRfc3339 follows time.Parse(time.RFC3339)', () => {
  it.each([
    ['2024-02-29T12:30:45Z', Date.UTC(2024, 1, 29, 12, 30, 45)],
    ['2024-02-29T12:30:45.123456789Z', Date.UTC(2024, 1, 29, 12, 30, 45, 123)],
    ['2024-02-29T12:30:45,5Z', Date.UTC(2024, 1, 29, 12, 30, 45, 500)],
    ['2024-03-01T01:00:00+02:00', Date.UTC(2024, 1, 29, 23, 0, 0)],
    ['2024-02-29T23:00:00-01:30', Date.UTC(2024, 2, 1, 0, 30, 0)],
  ])('%s is an instant', (text, ms) => {
    expect(parseRfc3339(text)).toEqual({ kind: 'time', ms });
  });

  it('reads years below 100 as such, not as 19xx', () => {
    expect(parseRfc3339('0099-12-31T23:59:59Z')).toEqual({ kind: 'time', ms: -59_011_459_201_000 });
  });

  it('reports the zero time (0001-01-01T00:00:00Z, in any zone) as zero', () => {
    expect(parseRfc3339('0001-01-01T00:00:00Z')).toEqual({ kind: 'zero' });
    expect(parseRfc3339('0001-01-01T01:00:00+01:00')).toEqual({ kind: 'zero' });
  });

  it.each([
    '2023-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:60Z',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01t00:00:00Z',
    '2024-01-01T00:00:00z',
    '2024-01-01T00:00:00',
    '2024-1-01T00:00:00Z',
    '24-01-01T00:00:00Z',
    '2024-01-01 00:00:00Z',
    '',
  ])('rejects %j', (text) => {
    expect(parseRfc3339(text)).toEqual({ kind: 'invalid' });
  });
});

describe('ageSince and formatRfc3339', () => {
  const now = Date.UTC(2026, 0, 10, 12, 0, 0);

  it('ages a timestamp against the given now', () => {
    expect(ageSince('2026-01-10T11:56:58Z', now)).toBe('3m2s');
    expect(ageSince('2026-01-08T09:00:00Z', now)).toBe('2d3h');
  });

  it('reads absent, null, zero and unparseable timestamps as <unknown>', () => {
    for (const value of [undefined, null, '0001-01-01T00:00:00Z', 'yesterday', 42]) {
      expect(ageSince(value, now)).toBe('<unknown>');
    }
  });

  it('formats in UTC at second precision, the zero time when absent', () => {
    expect(formatRfc3339('2026-01-10T13:00:00.999+01:00')).toBe('2026-01-10T12:00:00Z');
    expect(formatRfc3339(undefined)).toBe('0001-01-01T00:00:00Z');
  });
});
