import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SortedKeySet } from './sorted-key-set.ts';

describe('SortedKeySet', () => {
  it('behaves like a sorted array under random adds, deletes, ranges and ranks (chunks split and empty)', () => {
    const key = fc.stringMatching(/^[a-c]{0,4}$/);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), key }),
      fc.record({ kind: fc.constant('delete' as const), key }),
      fc.record({ kind: fc.constant('bulk' as const), count: fc.nat({ max: 3000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), key, key, (ops, lo, hi) => {
        const set = new SortedKeySet();
        const model = new Set<string>();
        for (const o of ops) {
          if (o.kind === 'add') {
            expect(set.add(o.key)).toBe(!model.has(o.key));
            model.add(o.key);
          } else if (o.kind === 'delete') {
            expect(set.delete(o.key)).toBe(model.delete(o.key));
          } else {
            for (let i = 0; i < o.count; i++) {
              const k = `k${String((i * 7919) % o.count).padStart(5, '0')}`;
              set.add(k);
              model.add(k);
            }
          }
        }
        const sorted = [...model].sort();
        expect(set.size).toBe(sorted.length);
        expect(set.keys()).toEqual(sorted);
        expect(set.keys(lo, hi)).toEqual(sorted.filter((k) => k >= lo && k < hi));
        expect(set.rank(lo)).toBe(sorted.filter((k) => k < lo).length);
        expect(set.countRange(lo, undefined)).toBe(sorted.filter((k) => k >= lo).length);
        expect(set.has(lo)).toBe(model.has(lo));
        const walked: string[] = [];
        set.walk(lo, undefined, (k) => walked.push(k) < 3);
        expect(walked).toEqual(sorted.filter((k) => k >= lo).slice(0, 3));
      }),
      { numRuns: 200 },
    );
  });
});
