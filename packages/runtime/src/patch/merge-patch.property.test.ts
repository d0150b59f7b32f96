import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMergePatch } from './create-merge-patch.ts';
import { deepEqual } from './deep-equal.ts';
import { applyMergePatch } from './merge-patch.ts';

/** Replaces every null, which a merge patch cannot express as a value, by 0. */
function withoutNulls(value: unknown): unknown {
  if (value === null) return 0;
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, withoutNulls(v)]));
  }
  return value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const keyArb = fc.constantFrom('a', 'b', 'c', 'spec', '__proto__', 'constructor');
/** JSON values whose objects share keys often, so diffs recurse. */
const valueArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, 1, -1.5, '', 'x', 'y'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const anyJsonArb = fc.oneof(valueArb, fc.jsonValue({ maxDepth: 4 }));

describe('merge patch properties', () => {
  it('applying the created patch to the original gives the modified value, for modified values without null', () => {
    fc.assert(
      fc.property(anyJsonArb, anyJsonArb.map(withoutNulls), (original, modified) => {
        const patch = createMergePatch(original, modified);
        expect(deepEqual(applyMergePatch(original, patch), modified)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('the patch between equal objects is {}', () => {
    fc.assert(
      fc.property(fc.dictionary(keyArb, anyJsonArb, { maxKeys: 4 }), (object) => {
        expect(createMergePatch(object, JSON.parse(JSON.stringify(object)))).toEqual({});
      }),
    );
  });

  it('applying a patch twice is the same as applying it once', () => {
    fc.assert(
      fc.property(anyJsonArb, anyJsonArb, (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(deepEqual(applyMergePatch(once, patch), once)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('works on deeply frozen inputs, leaves them as they were, and its result can be changed freely', () => {
    fc.assert(
      fc.property(anyJsonArb, anyJsonArb, (target, patch) => {
        const before = JSON.stringify([target, patch]);
        const result = applyMergePatch(deepFreeze(target), deepFreeze(patch));
        const diff = createMergePatch(target, result);
        expect(JSON.stringify([target, patch])).toBe(before);
        expect(Object.isFrozen(result) && typeof result === 'object' && result !== null).toBe(false);
        expect(typeof diff === 'object' && diff !== null && Object.isFrozen(diff)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('never changes Object.prototype', () => {
    fc.assert(
      fc.property(anyJsonArb, anyJsonArb, (target, patch) => {
        applyMergePatch(target, patch);
        createMergePatch(target, patch);
        expect(Object.keys(Object.prototype)).toEqual([]);
        expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
      }),
    );
  });
});
