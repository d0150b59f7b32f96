import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rememberLastKey, requestKey } from './request-key.ts';

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

describe('requestKey fast path for object keys', () => {
  it('gives exactly the general result for any { namespace, name } pair', () => {
    const general = (v: unknown) =>
      JSON.stringify(v, (_k, x: unknown) =>
        x !== null && typeof x === 'object' && !Array.isArray(x)
          ? Object.fromEntries(
              Object.keys(x)
                .sort()
                .map((k) => [k, (x as Record<string, unknown>)[k]]),
            )
          : x,
      );
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }),
        fc.boolean(),
        (namespace, name, swap) => {
          const key = swap ? { name, namespace } : { namespace, name };
          expect(requestKey(key)).toBe(general(key));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('rememberLastKey', () => {
  it('answers the same request object again without asking, and asks for any other', () => {
    const asked: unknown[] = [];
    const keyOf = rememberLastKey((request: { name: string }) => {
      asked.push(request);
      return request.name;
    });
    const a = { name: 'a' };
    expect([keyOf(a), keyOf(a), keyOf(a)]).toEqual(['a', 'a', 'a']);
    expect(asked).toEqual([a]);
    // An equal but other object is asked for: identity, not equality.
    const b = { name: 'a' };
    expect(keyOf(b)).toBe('a');
    expect(keyOf(a)).toBe('a');
    expect(asked).toEqual([a, b, a]);
  });

  it('remembers nothing when the key function throws', () => {
    let fail = true;
    const keyOf = rememberLastKey((request: { name: string }) => {
      if (fail) throw new Error('no key');
      return request.name;
    });
    const a = { name: 'a' };
    expect(() => keyOf(a)).toThrow('no key');
    fail = false;
    expect(keyOf(a)).toBe('a');
  });
});
