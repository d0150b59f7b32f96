import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepEqual } from './deep-equal.ts';

describe('deepEqual', () => {
  it('is true for equal JSON values whatever the object key order', () => {
    expect(
      deepEqual({ a: [1, { b: 'x', c: null }], d: true }, { d: true, a: [1, { c: null, b: 'x' }] }),
    ).toBe(true);
  });

  it.each([
    [{ a: 1 }, { a: 2 }],
    [{ a: 1 }, { a: 1, b: 1 }],
    [{ a: 1, b: 1 }, { a: 1 }],
    [
      [1, 2],
      [2, 1],
    ],
    [[1], [1, 1]],
    [[], {}],
    [{}, []],
    [null, {}],
    [0, '0'],
    [1, true],
    [{ a: null }, {}],
  ])('tells %j and %j apart', (a, b) => {
    expect(deepEqual(a, b)).toBe(false);
  });

  it('counts undefined members as absent and 0 as equal to -0', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(deepEqual(0, -0)).toBe(true);
  });

  it('compares only own members, so __proto__ members are plain data', () => {
    expect(deepEqual(JSON.parse('{"__proto__":{"a":1}}'), {})).toBe(false);
    expect(deepEqual(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"__proto__":{"a":1}}'))).toBe(true);
    expect(deepEqual({}, Object.create({ inherited: 1 }))).toBe(true);
  });

  it('agrees with comparing canonical JSON texts for any JSON values', () => {
    const canonical = (value: unknown): string =>
      JSON.stringify(value, (_key, v: unknown) =>
        typeof v === 'object' && v !== null && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          : v,
      );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (a, b) => {
        expect(deepEqual(a, b)).toBe(canonical(a) === canonical(b));
        expect(deepEqual(a, JSON.parse(JSON.stringify(a)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
