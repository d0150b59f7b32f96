import { describe, expect, it } from 'vitest';
import { BadRequestError, InvalidError, type JsonPatchOperation } from '../backend/index.ts';
import { applyJsonPatch } from './json-patch.ts';

const json = (text: string): unknown => JSON.parse(text);
const ops = (text: string): JsonPatchOperation[] => JSON.parse(text) as JsonPatchOperation[];

function failure(target: unknown, operations: unknown): InvalidError | BadRequestError {
  try {
    applyJsonPatch(target, operations as JsonPatchOperation[]);
  } catch (error) {
    if (error instanceof InvalidError || error instanceof BadRequestError) return error;
    throw error;
  }
  throw new Error('expected the patch to fail');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

describe('applyJsonPatch: the examples of RFC 6902 Appendix A', () => {
  it.each([
    [
      'A.1 adds an object member',
      '{"foo":"bar"}',
      '[{"op":"add","path":"/baz","value":"qux"}]',
      '{"baz":"qux","foo":"bar"}',
    ],
    [
      'A.2 adds an array element',
      '{"foo":["bar","baz"]}',
      '[{"op":"add","path":"/foo/1","value":"qux"}]',
      '{"foo":["bar","qux","baz"]}',
    ],
    [
      'A.3 removes an object member',
      '{"baz":"qux","foo":"bar"}',
      '[{"op":"remove","path":"/baz"}]',
      '{"foo":"bar"}',
    ],
    [
      'A.4 removes an array element',
      '{"foo":["bar","qux","baz"]}',
      '[{"op":"remove","path":"/foo/1"}]',
      '{"foo":["bar","baz"]}',
    ],
    [
      'A.5 replaces a value',
      '{"baz":"qux","foo":"bar"}',
      '[{"op":"replace","path":"/baz","value":"boo"}]',
      '{"baz":"boo","foo":"bar"}',
    ],
    [
      'A.6 moves a value',
      '{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}',
      '[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]',
      '{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}',
    ],
    [
      'A.7 moves an array element',
      '{"foo":["all","grass","cows","eat"]}',
      '[{"op":"move","from":"/foo/1","path":"/foo/3"}]',
      '{"foo":["all","cows","eat","grass"]}',
    ],
    [
      'A.8 passes tests of equal values',
      '{"baz":"qux","foo":["a",2,"c"]}',
      '[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]',
      '{"baz":"qux","foo":["a",2,"c"]}',
    ],
    [
      'A.10 adds a nested member object',
      '{"foo":"bar"}',
      '[{"op":"add","path":"/child","value":{"grandchild":{}}}]',
      '{"foo":"bar","child":{"grandchild":{}}}',
    ],
    [
      'A.11 ignores members it does not know',
      '{"foo":"bar"}',
      '[{"op":"add","path":"/baz","value":"qux","xyz":123}]',
      '{"foo":"bar","baz":"qux"}',
    ],
    [
      'A.14 unescapes ~01 to the key ~1',
      '{"/":9,"~1":10}',
      '[{"op":"test","path":"/~01","value":10}]',
      '{"/":9,"~1":10}',
    ],
    [
      'A.16 appends an array value with -',
      '{"foo":["bar"]}',
      '[{"op":"add","path":"/foo/-","value":["abc","def"]}]',
      '{"foo":["bar",["abc","def"]]}',
    ],
  ])('%s', (_title, target, patch, result) => {
    expect(applyJsonPatch(json(target), ops(patch))).toEqual(json(result));
  });

  it('A.9 fails a test of a different value with a 422', () => {
    const error = failure(
      json('{"baz":"qux","foo":["a",2,"c"]}'),
      ops('[{"op":"test","path":"/baz","value":"bar"}]'),
    );
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.status).toBe(422);
  });

  it('A.12 fails to add to a location whose parent does not exist', () => {
    expect(
      failure(json('{"foo":"bar"}'), ops('[{"op":"add","path":"/baz/bat","value":"qux"}]')),
    ).toBeInstanceOf(InvalidError);
  });

  it('A.15 does not consider a string equal to a number', () => {
    expect(
      failure(json('{"/":9,"~1":10}'), ops('[{"op":"test","path":"/~01","value":"10"}]')),
    ).toBeInstanceOf(InvalidError);
  });
});

describe('applyJsonPatch', () => {
  it('names the operation index, op and path of a failed operation, with the path as the cause field', () => {
    const error = failure({ spec: { a: 1 } }, [
      { op: 'test', path: '/spec/a', value: 1 },
      { op: 'replace', path: '/spec/b', value: 2 },
    ]);
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.message).toBe('json patch operation 1 (replace "/spec/b") failed: "/spec/b" does not exist');
    expect(error.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: error.message, field: '/spec/b' },
    ]);
  });

  it('names the source of a failed move or copy', () => {
    expect(failure({}, [{ op: 'copy', from: '/x', path: '/y' }]).message).toBe(
      'json patch operation 0 (copy "/y" from "/x") failed: "/x" does not exist',
    );
  });

  it.each([
    [
      'an index with a leading zero',
      { a: [1, 2] },
      { op: 'replace', path: '/a/01', value: 0 },
      'is not an array index',
    ],
    [
      'an add past the end of an array',
      { a: [1] },
      { op: 'add', path: '/a/2', value: 0 },
      'out of bounds for an insert',
    ],
    ['a remove at the length of an array', { a: [1] }, { op: 'remove', path: '/a/1' }, 'out of bounds'],
    ['a replace with -', { a: [1] }, { op: 'replace', path: '/a/-', value: 0 }, 'is not an array index'],
    ['a remove of a missing member', { a: 1 }, { op: 'remove', path: '/b' }, '"/b" does not exist'],
    [
      'a path through a string',
      { a: 'text' },
      { op: 'add', path: '/a/b', value: 0 },
      '"/a" is not an object or array',
    ],
    [
      'a test through a number',
      { a: 1 },
      { op: 'test', path: '/a/b/c', value: 0 },
      '"/a" is not an object or array',
    ],
    [
      'a remove of the whole document',
      { a: 1 },
      { op: 'remove', path: '' },
      'the whole document cannot be removed',
    ],
    [
      'a move into its own child',
      { a: { b: {} } },
      { op: 'move', from: '/a', path: '/a/b/c' },
      'cannot move "/a" into itself',
    ],
    ['a negative index', { a: [1] }, { op: 'add', path: '/a/-1', value: 0 }, 'is not an array index'],
    ['a huge index', { a: [1] }, { op: 'add', path: '/a/99999999999999999999', value: 0 }, 'out of bounds'],
    ['an add to a missing parent', {}, { op: 'add', path: '/a/b', value: 0 }, '"/a" does not exist'],
    [
      'a path into an inherited member',
      {},
      { op: 'add', path: '/__proto__/polluted', value: true },
      'does not exist',
    ],
    [
      'a path into constructor',
      {},
      { op: 'add', path: '/constructor/prototype/x', value: 1 },
      'does not exist',
    ],
  ])('fails %s with a 422', (_title, target, operation, problem) => {
    const error = failure(target, [operation]);
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.message).toContain(problem);
  });

  it.each([
    ['not an array', { op: 'add' }, 'expected an array of operations'],
    ['an operation that is not an object', ['add'], 'operation 0 must be an object'],
    ['a missing op', [{ path: '/a' }], 'operation 0 has no "op"'],
    ['an unknown op', [{ op: 'merge', path: '/a' }], 'operation 0 has an unknown op "merge"'],
    ['a missing path', [{ op: 'remove' }], 'operation 0 (remove) has no "path"'],
    ['a path that is not a string', [{ op: 'remove', path: 1 }], 'has a non-string "path" 1'],
    ['a path without a leading /', [{ op: 'remove', path: 'a' }], 'must be "" or start with "/"'],
    ['a bad ~ escape', [{ op: 'remove', path: '/a~2' }], '"~" must be followed by 0 or 1'],
    ['a trailing ~', [{ op: 'remove', path: '/a~' }], '"~" must be followed by 0 or 1'],
    ['a missing value', [{ op: 'add', path: '/a' }], 'operation 0 (add "/a") has no "value"'],
    ['a missing value in test', [{ op: 'test', path: '/a' }], 'operation 0 (test "/a") has no "value"'],
    ['a missing from', [{ op: 'move', path: '/a' }], 'operation 0 (move) has no "from"'],
    ['a malformed from', [{ op: 'copy', from: 'x', path: '/a' }], 'malformed "from" "x"'],
    [
      'a malformed later operation',
      [
        { op: 'add', path: '/a', value: 1 },
        { op: 'copy', path: '/b' },
      ],
      'operation 1 (copy) has no "from"',
    ],
  ])('rejects %s with a 400 before applying anything', (_title, patch, problem) => {
    const error = failure({ a: 1 }, patch);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain(problem);
  });

  it('checks the whole patch before running it, so a malformed operation wins over a failing one', () => {
    expect(
      failure({}, [
        { op: 'remove', path: '/missing' },
        { op: 'nope', path: '/' },
      ]),
    ).toBeInstanceOf(BadRequestError);
  });

  it('accepts null as a value', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/a', value: null }])).toEqual({ a: null });
    expect(applyJsonPatch({ a: null }, [{ op: 'test', path: '/a', value: null }])).toEqual({ a: null });
  });

  it('works on the whole document with the empty path', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }])).toEqual([1]);
    expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '', value: 'x' }])).toBe('x');
    expect(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }])).toEqual({ a: 1 });
    expect(applyJsonPatch({ a: 1 }, [{ op: 'copy', from: '', path: '/self' }])).toEqual({
      a: 1,
      self: { a: 1 },
    });
  });

  it('treats the empty string, - on objects and escaped slashes as ordinary member names', () => {
    expect(applyJsonPatch({}, [{ op: 'add', path: '/', value: 1 }])).toEqual({ '': 1 });
    expect(applyJsonPatch({}, [{ op: 'add', path: '/-', value: 1 }])).toEqual({ '-': 1 });
    expect(applyJsonPatch({}, [{ op: 'add', path: '/a~1b~0c', value: 1 }])).toEqual({ 'a/b~c': 1 });
  });

  it('moves and copies to - append, and a move to its own location changes nothing', () => {
    expect(applyJsonPatch({ a: [1, 2, 3] }, [{ op: 'move', from: '/a/0', path: '/a/-' }])).toEqual({
      a: [2, 3, 1],
    });
    expect(applyJsonPatch({ a: [1], b: 2 }, [{ op: 'copy', from: '/b', path: '/a/-' }])).toEqual({
      a: [1, 2],
      b: 2,
    });
    expect(applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a' }])).toEqual({
      a: { b: 1 },
    });
  });

  it('copies are independent of their source', () => {
    const result = applyJsonPatch({ a: { n: 1 } }, [
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'replace', path: '/b/n', value: 2 },
    ]);
    expect(result).toEqual({ a: { n: 1 }, b: { n: 2 } });
  });

  it('is all or nothing: when a later operation fails the input is untouched', () => {
    const target = { a: [1, 2], b: { c: 1 } };
    failure(target, [
      { op: 'add', path: '/a/0', value: 0 },
      { op: 'remove', path: '/b/c' },
      { op: 'test', path: '/a/0', value: 1 },
    ]);
    expect(target).toEqual({ a: [1, 2], b: { c: 1 } });
  });

  it('works on frozen inputs, mutates neither the target nor the operations, and shares no object with them', () => {
    const target = deepFreeze({ a: [1, { b: 2 }], c: { d: 'x' } });
    const value = deepFreeze({ nested: [1] });
    const patch = deepFreeze([
      { op: 'add', path: '/a/1/e', value },
      { op: 'remove', path: '/c/d' },
      { op: 'move', from: '/a/0', path: '/c/moved' },
    ] as JsonPatchOperation[]);
    const result = applyJsonPatch(target, patch) as { a: [{ b: number; e: { nested: number[] } }] };
    expect(result).toEqual({ a: [{ b: 2, e: { nested: [1] } }], c: { moved: 1 } });
    result.a[0].e.nested.push(2);
    expect(value).toEqual({ nested: [1] });
    expect(target).toEqual({ a: [1, { b: 2 }], c: { d: 'x' } });
  });

  it('adds __proto__ and constructor as own members without touching any prototype', () => {
    const result = applyJsonPatch({}, [
      { op: 'add', path: '/__proto__', value: { polluted: true } },
      { op: 'add', path: '/constructor', value: { prototype: { polluted: true } } },
      { op: 'add', path: '/__proto__/more', value: 1 },
      { op: 'test', path: '/__proto__/polluted', value: true },
    ]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toEqual({ polluted: true, more: 1 });
    expect(Object.hasOwn(result, 'constructor')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const removed = applyJsonPatch(result, [{ op: 'remove', path: '/__proto__' }]) as object;
    expect(Object.hasOwn(removed, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(removed)).toBe(Object.prototype);
  });

  it('does not treat an inherited member as present for remove, replace or test', () => {
    for (const op of ['remove', 'replace', 'test'] as const) {
      const operation = op === 'remove' ? { op, path: '/toString' } : { op, path: '/toString', value: 1 };
      expect(failure({}, [operation])).toBeInstanceOf(InvalidError);
    }
  });
});
