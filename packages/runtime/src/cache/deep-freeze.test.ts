import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from './deep-freeze.ts';

/** Whether every object and array reachable from `value` through own properties is frozen. */
function deeplyFrozen(value: unknown, seen = new Set<unknown>()): boolean {
  if (typeof value !== 'object' || value === null || seen.has(value)) return true;
  seen.add(value);
  if (ArrayBuffer.isView(value)) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every((item) => deeplyFrozen(item, seen));
}

describe('deepFreeze', () => {
  it('freezes every object and array of any JSON value, in place, and changes nothing in it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = structuredClone(value);
        expect(deepFreeze(value)).toBe(value);
        expect(deeplyFrozen(value)).toBe(true);
        expect(value).toEqual(copy);
      }),
      { numRuns: 300 },
    );
  });

  it('returns primitives as they are and leaves typed arrays writable', () => {
    expect(deepFreeze(7)).toBe(7);
    expect(deepFreeze(null)).toBe(null);
    const bytes = new Uint8Array([1, 2]);
    const holder = deepFreeze({ bytes, list: [{ a: 1 }] });
    expect(Object.isFrozen(holder.list[0])).toBe(true);
    bytes[0] = 9;
    expect(holder.bytes[0]).toBe(9);
  });

  it('takes a frozen object as deeply frozen (cycles are safe; a shared object is not walked twice)', () => {
    const inner: Record<string, unknown> = { n: 1 };
    const cyclic: Record<string, unknown> = { inner };
    inner.back = cyclic;
    deepFreeze(cyclic);
    expect(Object.isFrozen(inner)).toBe(true);
    const shallow = Object.freeze({ child: { open: true } });
    deepFreeze(shallow);
    expect(Object.isFrozen(shallow.child)).toBe(false);
  });

  it('walks own properties only, not inherited ones', () => {
    const proto = { inherited: { open: true } };
    const object = Object.create(proto) as { inherited: { open: boolean }; own: { x: number } };
    object.own = { x: 1 };
    deepFreeze(object);
    expect(Object.isFrozen(object.own)).toBe(true);
    expect(Object.isFrozen(proto.inherited)).toBe(false);
  });
});
