import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { predicateFuncs } from './predicate-funcs.ts';

describe('predicateFuncs', () => {
  it('each event type is decided by its own test with the narrowed event', () => {
    const p = predicateFuncs<number>({
      create: (e) => e.isInInitialList !== true,
      update: (e) => e.oldObject !== e.object,
      delete: (e) => e.finalStateUnknown !== true,
      generic: () => false,
    });
    expect(p({ type: 'create', object: 1 })).toBe(true);
    expect(p({ type: 'create', object: 1, isInInitialList: true })).toBe(false);
    expect(p({ type: 'update', oldObject: 1, object: 2 })).toBe(true);
    expect(p({ type: 'update', oldObject: 1, object: 1 })).toBe(false);
    expect(p({ type: 'delete', object: 1 })).toBe(true);
    expect(p({ type: 'delete', object: 1, finalStateUnknown: true })).toBe(false);
    expect(p({ type: 'generic', object: 1 })).toBe(false);
  });

  it('event types without a test pass', () => {
    const p = predicateFuncs<number>({ delete: () => false });
    expect(p({ type: 'create', object: 1 })).toBe(true);
    expect(p({ type: 'update', oldObject: 1, object: 2 })).toBe(true);
    expect(p({ type: 'generic', object: 1 })).toBe(true);
    expect(p({ type: 'delete', object: 1 })).toBe(false);
  });

  it('a test that is not a function, or no object at all, is rejected with an OptionsError', () => {
    expect(() => predicateFuncs({ update: true as never })).toThrow(OptionsError);
    expect(() => predicateFuncs(undefined as never)).toThrow(OptionsError);
  });
});
