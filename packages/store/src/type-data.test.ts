import type { KubeObject } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { TypeData } from './type-data.ts';

const object = (rv: number): KubeObject => ({ metadata: { name: 'a', resourceVersion: String(rv) } });

describe('TypeData versions', () => {
  it('reads the version current at any revision, and compaction forgets only what no later read can see', () => {
    const td = new TypeData('t', undefined);
    td.put('k', 2, object(2));
    td.put('k', 5, object(5));
    td.put('k', 7, undefined);
    expect(td.at('k', 1)).toBeUndefined();
    expect(td.at('k', 4)?.metadata.resourceVersion).toBe('2');
    expect(td.at('k', 6)?.metadata.resourceVersion).toBe('5');
    expect(td.at('k', 7)).toBeUndefined();
    expect(td.liveKeys.has('k')).toBe(false);
    td.compactKey('k', 5);
    expect(td.at('k', 5)?.metadata.resourceVersion).toBe('5');
    expect(td.at('k', 4)).toBeUndefined();
    expect(td.allKeys.has('k')).toBe(true);
    td.compactKey('k', 7);
    expect(td.allKeys.has('k')).toBe(false);
    expect(td.at('k', 9)).toBeUndefined();
  });

  it('a key re-created after a delete keeps its history until compacted', () => {
    const td = new TypeData('t', undefined);
    td.put('k', 2, object(2));
    td.put('k', 3, undefined);
    td.put('k', 4, object(4));
    expect(td.at('k', 3)).toBeUndefined();
    expect(td.latest('k')?.metadata.resourceVersion).toBe('4');
    td.compactKey('k', 3);
    expect(td.at('k', 3)).toBeUndefined();
    expect(td.latest('k')?.metadata.resourceVersion).toBe('4');
    expect(td.liveKeys.has('k')).toBe(true);
  });
});
