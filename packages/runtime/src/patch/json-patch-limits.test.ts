import { describe, expect, it } from 'vitest';
import { InvalidError, type JsonPatchOperation } from '../backend/index.ts';
import { deepEqual } from './deep-equal.ts';
import { applyJsonPatch } from './json-patch.ts';
import { cloneJson, jsonSizeWithin } from './json-value.ts';

/** `copy` of `/data` into a new member of itself, `count` times: each one doubles the document. */
const doubling = (count: number): JsonPatchOperation[] =>
  Array.from({ length: count }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/k${i}` }) as const);

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('applyJsonPatch bounds (bounded memory, no crash)', () => {
  it('refuses 24 copies of the whole document (each doubling it) once maxCopyBytes is spent', () => {
    const error = thrown(() =>
      applyJsonPatch({ data: { x: 'y'.repeat(100) } }, doubling(24), { maxCopyBytes: 3 * 1024 * 1024 }),
    );
    expect(error).toBeInstanceOf(InvalidError);
    expect((error as InvalidError).message).toMatch(
      /accumulated size increase of copy exceeds the limit 3145728/,
    );
  });

  it('still applies copies whose total stays under maxCopyBytes', () => {
    const result = applyJsonPatch({ data: { x: 'y' } }, doubling(3), { maxCopyBytes: 1024 }) as {
      data: unknown;
    };
    expect(jsonSizeWithin(result, 10_000)).toBeLessThan(1024);
  });

  it('refuses more operations than maxOperations before applying any', () => {
    const patch = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '', value: {} }) as const);
    const error = thrown(() => applyJsonPatch({}, patch, { maxOperations: 10_000 }));
    expect(error).toBeInstanceOf(InvalidError);
    expect((error as Error).message).toBe(
      'The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
    expect(applyJsonPatch({}, patch.slice(1), { maxOperations: 10_000 })).toEqual({});
  });

  it('copies, compares and measures values nested 200 000 levels deep without a stack overflow', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { a: deep };
    const copy = cloneJson(deep);
    expect(copy === deep).toBe(false);
    expect(deepEqual(copy, deep)).toBe(true);
    // JSON.stringify itself overflows here; 100 000 arrays and objects alternate around 'leaf'.
    expect(jsonSizeWithin(deep, Number.POSITIVE_INFINITY)).toBe(6 + 100_000 * 2 + 100_000 * 6);
    const shallow = { a: [1, 'two', null, true, { b: [] }], c: {} };
    expect(jsonSizeWithin(shallow, 1000)).toBe(JSON.stringify(shallow).length);
    expect(jsonSizeWithin(deep, 1000)).toBe(Number.POSITIVE_INFINITY);
    const patched = applyJsonPatch({ v: deep }, [{ op: 'test', path: '/v', value: deep }]);
    expect(deepEqual(patched, { v: deep })).toBe(true);
  });
});
