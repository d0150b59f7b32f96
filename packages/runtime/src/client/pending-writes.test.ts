import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareResourceVersions } from './pending-writes.ts';

/** The rule, as plainly as it reads: both decimal, compared as (arbitrarily large) integers. */
function reference(a: string, b: string): number | undefined {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const digits = fc.stringMatching(/^[0-9]{1,25}$/);
const version = fc.oneof(
  digits,
  digits.map((d) => `000${d}`),
  fc.constantFrom('', '0', '00', '-1', '1e3', ' 12', '12 ', '١٢', '9007199254740993'),
  fc.string({ maxLength: 6 }),
);

describe('compareResourceVersions', () => {
  it('orders decimal revisions as integers of any length, leading zeros included; undefined for anything else', () => {
    expect(compareResourceVersions('9', '10')).toBe(-1);
    expect(compareResourceVersions('9007199254740993', '9007199254740992')).toBe(1);
    expect(compareResourceVersions('007', '7')).toBe(0);
    expect(compareResourceVersions('', '1')).toBeUndefined();
    expect(compareResourceVersions(undefined, '1')).toBeUndefined();
    fc.assert(
      fc.property(version, version, (a, b) => {
        expect(compareResourceVersions(a, b)).toBe(reference(a, b));
        expect(compareResourceVersions(a, a)).toBe(reference(a, a));
      }),
      // Saturated: equal, longer, padded and non-decimal pairs all come within ~200 cases.
      { numRuns: 1000 },
    );
  });
});
