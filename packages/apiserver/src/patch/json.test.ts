import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareStrings } from './json.ts';

/** Code point order the plain way: each string as its code points (a lone surrogate is its unit). */
function byCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  }
  return Math.sign(x.length - y.length);
}

// Strings that share prefixes and mix ASCII, code units just below and above the surrogates,
// surrogate pairs and lone surrogates: where UTF-16 order and code point order part.
const unit = fc.constantFrom(
  'a',
  'b',
  '\u00e9',
  '\ud7ff',
  '\ue000',
  '\uffff',
  '\ud83d\ude00',
  '\ud83d',
  '\ude00',
);
const text = fc.array(unit, { maxLength: 5 }).map((units) => units.join(''));

describe('compareStrings', () => {
  it('orders strings by code point, as Go orders their UTF-8 bytes', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(compareStrings(a, b)).toBe(byCodePoints(a, b));
      }),
      { numRuns: 2000 },
    );
  });

  it('puts a supplementary character after a BMP character above the surrogates', () => {
    expect(compareStrings('\ud83d\ude00', '\uffff')).toBe(1);
    expect(compareStrings('x\ud83d\ude00', 'x\ue000')).toBe(1);
    expect(compareStrings('ab', 'abc')).toBe(-1);
    expect(compareStrings('b', 'abc')).toBe(1);
  });
});
