import { BadRequestError, InvalidError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { cpuMs } from '../cpu-test-support.ts';
import { PatchErrorCodes } from './errors.ts';
import type { PatchSchema } from './schema.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';

/** A schema like upstream's test type: a merged list by name, a merged int list, a plain list. */
const schema: PatchSchema = {
  type: 'struct',
  fields: {
    mergingList: {
      type: 'list',
      patchStrategy: 'merge',
      patchMergeKey: 'name',
      items: {
        type: 'struct',
        fields: {
          nested: { type: 'list', patchStrategy: 'merge', patchMergeKey: 'name' },
        },
      },
    },
    mergingIntList: { type: 'list', patchStrategy: 'merge' },
    nonMergingList: { type: 'list' },
  },
};

const smp = (original: unknown, patch: unknown): unknown => applyStrategicMergePatch(original, patch, schema);

describe('maps', () => {
  it.each([
    ['sets a member and keeps the others', { a: 1, b: 2 }, { b: 3, c: 4 }, { a: 1, b: 3, c: 4 }],
    ['deletes a member whose patch value is null', { a: 1, b: 2 }, { a: null }, { b: 2 }],
    ['ignores null for a member that is absent', { a: 1 }, { z: null }, { a: 1 }],
    ['merges nested maps member by member', { m: { x: 1, y: 2 } }, { m: { y: 3 } }, { m: { x: 1, y: 3 } }],
    ['drops nulls inside a value that is new', { a: 1 }, { m: { x: null, y: 1 } }, { a: 1, m: { y: 1 } }],
    ['replaces a value of another kind', { m: { x: 1 } }, { m: 'scalar' }, { m: 'scalar' }],
    [
      '$patch: replace replaces the map instead of merging',
      { m: { x: 1, y: 2 } },
      { m: { $patch: 'replace', z: 3 } },
      { m: { z: 3 } },
    ],
    ['$patch: delete empties the map', { m: { x: 1 }, k: 1 }, { m: { $patch: 'delete' } }, { m: {}, k: 1 }],
    ['$patch: delete at the root empties the object', { a: 1 }, { $patch: 'delete' }, {}],
    ['a new value carrying $patch is not stored', { a: 1 }, { m: { $patch: 'replace', x: 1 } }, { a: 1 }],
  ])('%s', (_title, original, patch, expected) => {
    expect(smp(original, patch)).toEqual(expected);
  });

  it('$retainKeys clears the original members it does not list', () => {
    const original = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } };
    const patch = { strategy: { $retainKeys: ['type'], type: 'Recreate' } };
    expect(smp(original, patch)).toEqual({ strategy: { type: 'Recreate' } });
  });

  it('$retainKeys rejects a patch that sets a member it does not list', () => {
    const patch = { strategy: { $retainKeys: ['type'], type: 'Recreate', other: 1 } };
    expect(() => smp({ strategy: {} }, patch)).toThrow(BadRequestError);
    expect(() => smp({ strategy: {} }, patch)).toThrow('invalid patch format of retainKeys');
  });

  it('an unknown $patch value on a map is an InvalidError naming the map', () => {
    const error = catchError(() => smp({ m: { x: 1 } }, { m: { $patch: 'shred' } }));
    expect(error).toBeInstanceOf(InvalidError);
    expect((error as InvalidError).causes[0]?.field).toBe('m');
    expect((error as InvalidError).message).toContain('unknown patch type: "shred"');
    expect((error.cause as { code?: string }).code).toBe(PatchErrorCodes.INVALID_DIRECTIVE);
  });
});

describe('lists', () => {
  const list = (...names: string[]) => names.map((name) => ({ name }));

  it.each([
    [
      'merges elements with the same merge key',
      { mergingList: [{ name: 'a', v: 1, w: 1 }] },
      { mergingList: [{ name: 'a', v: 2 }] },
      { mergingList: [{ name: 'a', v: 2, w: 1 }] },
    ],
    [
      'appends elements with a new merge key after the live ones',
      { mergingList: list('a', 'b') },
      { mergingList: list('c') },
      { mergingList: list('c', 'a', 'b') },
    ],
    [
      'deletes a field of an element with null',
      { mergingList: [{ name: 'a', v: 1, w: 1 }] },
      { mergingList: [{ name: 'a', v: null }] },
      { mergingList: [{ name: 'a', w: 1 }] },
    ],
    [
      '$patch: delete removes the element with that merge key',
      { mergingList: list('a', 'b', 'c') },
      { mergingList: [{ name: 'b', $patch: 'delete' }] },
      { mergingList: list('a', 'c') },
    ],
    [
      '$patch: delete of a missing element changes nothing',
      { mergingList: list('a') },
      { mergingList: [{ name: 'z', $patch: 'delete' }] },
      { mergingList: list('a') },
    ],
    [
      '$patch: replace as an element replaces the whole list with the other elements',
      { mergingList: list('a', 'b') },
      { mergingList: [{ $patch: 'replace' }, { name: 'x', v: null }] },
      { mergingList: list('x') },
    ],
    [
      'merges lists nested in merged elements',
      { mergingList: [{ name: 'a', nested: [{ name: 'n1', v: 1 }] }] },
      { mergingList: [{ name: 'a', nested: [{ name: 'n2', v: 2 }] }] },
      {
        mergingList: [
          {
            name: 'a',
            nested: [
              { name: 'n2', v: 2 },
              { name: 'n1', v: 1 },
            ],
          },
        ],
      },
    ],
    [
      'unions a merged list of primitives without duplicates',
      { mergingIntList: [1, 2] },
      { mergingIntList: [2, 3] },
      { mergingIntList: [1, 2, 3] },
    ],
    [
      'keeps the patch order for primitives it names',
      { mergingIntList: [1, 2, 3] },
      { mergingIntList: [3, 1] },
      { mergingIntList: [2, 3, 1] },
    ],
    [
      'replaces a list without merge strategy',
      { nonMergingList: [1, 2, 3] },
      { nonMergingList: [4] },
      { nonMergingList: [4] },
    ],
    [
      'replaces a list the schema does not describe',
      { other: [{ name: 'a' }] },
      { other: [{ name: 'b' }] },
      { other: [{ name: 'b' }] },
    ],
    ['null deletes a list', { mergingList: list('a') }, { mergingList: null }, {}],
  ])('%s', (_title, original, patch, expected) => {
    expect(smp(original, patch)).toEqual(expected);
  });

  it('$deleteFromPrimitiveList removes every occurrence of the listed values', () => {
    const patch = { '$deleteFromPrimitiveList/mergingIntList': [2, 9] };
    expect(smp({ mergingIntList: [1, 2, 3, 2] }, patch)).toEqual({ mergingIntList: [1, 3] });
  });

  it('$deleteFromPrimitiveList never creates the list', () => {
    expect(smp({}, { '$deleteFromPrimitiveList/mergingIntList': [1] })).toEqual({});
  });

  it('$deleteFromPrimitiveList and an addition to the same list both apply', () => {
    const patch = { '$deleteFromPrimitiveList/mergingIntList': [1], mergingIntList: [4] };
    expect(smp({ mergingIntList: [1, 2] }, patch)).toEqual({ mergingIntList: [4, 2] });
  });

  it('$setElementOrder orders the merged elements and keeps server-only ones near their neighbours', () => {
    const original = {
      mergingList: [
        { name: '1' },
        { name: '3', v: 3 },
        { name: '4', v: 4 },
        { name: '2', v: 2 },
        { name: '9' },
      ],
    };
    const patch = { '$setElementOrder/mergingList': list('4', '2', '3', '1') };
    expect(smp(original, patch)).toEqual({
      mergingList: [
        { name: '4', v: 4 },
        { name: '2', v: 2 },
        { name: '3', v: 3 },
        { name: '1' },
        { name: '9' },
      ],
    });
  });

  it('$setElementOrder places a new element where the order says', () => {
    const patch = { '$setElementOrder/mergingIntList': [3, 1, 2], mergingIntList: [3] };
    expect(smp({ mergingIntList: [1, 2] }, patch)).toEqual({ mergingIntList: [3, 1, 2] });
  });

  it('$setElementOrder naming elements that do not exist changes only the order', () => {
    const patch = { '$setElementOrder/mergingIntList': [3, 2, 1] };
    expect(smp({ mergingIntList: [1, 3] }, patch)).toEqual({ mergingIntList: [3, 1] });
  });

  it('$setElementOrder whose order contradicts the patch list is a BadRequestError', () => {
    const patch = { '$setElementOrder/mergingList': list('a', 'b'), mergingList: list('b', 'a') };
    expect(() => smp({ mergingList: [] }, patch)).toThrow(BadRequestError);
  });

  it.each([
    [
      'an element without the merge key',
      { mergingList: [{ v: 1 }] },
      BadRequestError,
      'does not contain declared merge key: name',
    ],
    [
      '$patch: merge on a list element',
      { mergingList: [{ $patch: 'merge' }] },
      InvalidError,
      'merging lists cannot yet be specified',
    ],
    [
      'an unknown $patch on a list element',
      { mergingList: [{ name: 'a', $patch: 'x' }] },
      InvalidError,
      'unknown patch type',
    ],
    ['a list of lists', { mergingIntList: [[1]] }, InvalidError, 'lists of lists are not supported'],
    [
      'mixed element types',
      { mergingIntList: ['a'] },
      BadRequestError,
      'list element types are not identical',
    ],
    ['a $setElementOrder without a list name', { $setElementOrder: [] }, BadRequestError, 'setElementOrder'],
    [
      'a $deleteFromPrimitiveList that is not a list name',
      { $deleteFromPrimitiveListX: [] },
      BadRequestError,
      'primitive list',
    ],
    ['$retainKeys that is not a list', { $retainKeys: 'a' }, BadRequestError, 'retainKeys'],
    ['a patch that is not an object', [1], BadRequestError, 'must be a JSON object'],
  ])('%s is refused', (_title, patch, type, message) => {
    const error = catchError(() => smp({ mergingList: [{ name: 'a' }], mergingIntList: [1] }, patch));
    expect(error).toBeInstanceOf(type);
    expect(error.message).toContain(message);
  });
});

describe('large lists', () => {
  it('merges, orders and deletes in lists of 20 000 elements without quadratic work', () => {
    const n = 20_000;
    const original = {
      mergingIntList: Array.from({ length: n }, (_, i) => i),
      mergingList: Array.from({ length: n }, (_, i) => ({ name: `e${i}`, v: i })),
    };
    const patch = {
      mergingIntList: Array.from({ length: n }, (_, i) => i + n / 2),
      '$deleteFromPrimitiveList/mergingIntList': Array.from({ length: n / 2 }, (_, i) => i * 2),
      '$setElementOrder/mergingList': Array.from({ length: n }, (_, i) => ({ name: `e${n - 1 - i}` })),
      mergingList: Array.from({ length: n / 2 }, (_, i) => ({ name: `e${n - 1 - i * 2}`, w: 1 })),
    };
    const started = cpuMs();
    const result = smp(original, patch) as { mergingIntList: number[]; mergingList: { name: string }[] };
    expect(cpuMs() - started).toBeLessThan(3_000);
    expect(result.mergingIntList).toHaveLength(n);
    expect(result.mergingList[0]).toEqual({ name: `e${n - 1}`, v: n - 1, w: 1 });
  });
});

describe('purity', () => {
  it('changes neither input and shares nothing with them', () => {
    const original = { mergingList: [{ name: 'a', v: { deep: 1 } }], m: { x: 1 } };
    const patch = { mergingList: [{ name: 'a', w: 2 }], m: { y: { z: 1 } } };
    const before = structuredClone({ original, patch });
    const result = smp(original, patch) as { m: { y: { z: number } }; mergingList: { v: object }[] };
    expect({ original, patch }).toEqual(before);
    result.m.y.z = 99;
    expect(patch.m.y.z).toBe(1);
    expect(result.mergingList[0]?.v).not.toBe(original.mergingList[0]?.v);
  });

  it('treats __proto__ as a plain member', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const result = smp({}, patch) as Record<string, unknown>;
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

function catchError(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}
