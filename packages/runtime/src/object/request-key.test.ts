import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestKey } from './request-key.ts';

describe('requestKey', () => {
  it('a string is its own key', () => {
    expect(requestKey('default/web')).toBe('default/web');
  });

  it('objects with the same entries in another order have the same key, at every depth', () => {
    expect(requestKey({ a: 1, b: { c: 2, d: 3 } })).toBe(requestKey({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it('objects with different values have different keys', () => {
    expect(requestKey({ namespace: 'a', name: 'x' })).not.toBe(requestKey({ namespace: 'b', name: 'x' }));
  });

  it('array order matters', () => {
    expect(requestKey([1, 2])).not.toBe(requestKey([2, 1]));
  });

  it('undefined falls back to its string form', () => {
    expect(requestKey(undefined)).toBe('undefined');
  });

  it('any shuffle of an object’s keys gives the same key', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (dict) => {
        const reversed = Object.fromEntries(Object.entries(dict).reverse());
        expect(requestKey(reversed)).toBe(requestKey(dict));
      }),
    );
  });
});
