import { describe, expect, it } from 'vitest';
import { type Fence, FencedError, FenceTable } from './fence.ts';

const f = (epoch: number, holder = 'a', name = 'op'): Fence => ({ name, holder, epoch });

describe('FenceTable', () => {
  it('raises a mark on a higher epoch, refuses a lower one and the same epoch from another holder', () => {
    const table = new FenceTable();
    expect(table.check(f(1))).toEqual(f(1));
    expect(table.check(f(2, 'b'))).toEqual(f(2, 'b'));
    expect(() => table.check(f(1))).toThrow(FencedError);
    expect(() => table.check(f(2, 'a'))).toThrow(FencedError);
    expect(table.check(f(2, 'b'))).toBe(table.mark('op'));
    // a dry run checks without raising
    expect(table.check(f(3, 'c'), false)).toEqual(f(3, 'c'));
    expect(table.mark('op')).toEqual(f(2, 'b'));
  });

  it('calls keep with every mark as it will be before a raise, and only then; a throwing keep refuses the raise', () => {
    const kept: (readonly Fence[])[] = [];
    let fail = false;
    const table = new FenceTable({
      keep: (marks) => {
        if (fail) throw new Error('disk full');
        kept.push(marks);
      },
    });
    table.restore([f(5, 'x', 'other')]);
    expect(kept).toEqual([]);
    table.check(f(1));
    table.check(f(1)); // the mark already: nothing to keep
    table.check(f(9, 'z'), false); // a dry run
    table.check(f(2));
    expect(kept).toEqual([
      [f(5, 'x', 'other'), f(1)],
      [f(5, 'x', 'other'), f(2)],
    ]);
    fail = true;
    expect(() => table.check(f(3))).toThrow('disk full');
    expect(table.mark('op')).toEqual(f(2));
    expect(table.marks()).toHaveLength(2);
  });
});
