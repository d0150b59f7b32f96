import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOlderResourceVersion } from './resource-version.ts';

describe('isOlderResourceVersion', () => {
  it('orders decimal resource versions numerically, beyond the safe integer range too', () => {
    expect(isOlderResourceVersion('9', '10')).toBe(true);
    expect(isOlderResourceVersion('10', '9')).toBe(false);
    expect(isOlderResourceVersion('10', '10')).toBe(false);
    expect(isOlderResourceVersion('99999999999999999998', '99999999999999999999')).toBe(true);
  });

  it('never calls an opaque or empty resource version older', () => {
    for (const [a, b] of [
      ['a1', 'b2'],
      ['', '5'],
      ['5', ''],
      ['007', '8'],
      ['1.5', '2'],
    ] as const) {
      expect(isOlderResourceVersion(a, b)).toBe(false);
    }
  });

  it('agrees with BigInt comparison for any pair of non-negative integers', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        (a, b) => {
          expect(isOlderResourceVersion(a.toString(), b.toString())).toBe(a < b);
        },
      ),
    );
  });
});
