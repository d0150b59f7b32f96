import { describe, expect, it } from 'vitest';
import { createMergePatch } from './create-merge-patch.ts';
import { applyMergePatch } from './merge-patch.ts';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const json = (text: string): unknown => JSON.parse(text);

describe('applyMergePatch', () => {
  // RFC 7386 Appendix A, one row per example: target, patch, result.
  it.each([
    ['{"a":"b"}', '{"a":"c"}', '{"a":"c"}'],
    ['{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'],
    ['{"a":"b"}', '{"a":null}', '{}'],
    ['{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'],
    ['{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'],
    ['{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'],
    ['{"a":{"b":"c"}}', '{"a":{"b":"d","c":null}}', '{"a":{"b":"d"}}'],
    ['{"a":[{"b":"c"}]}', '{"a":[1]}', '{"a":[1]}'],
    ['["a","b"]', '["c","d"]', '["c","d"]'],
    ['{"a":"b"}', '["c"]', '["c"]'],
    ['{"a":"foo"}', 'null', 'null'],
    ['{"a":"foo"}', '"bar"', '"bar"'],
    ['{"e":null}', '{"a":1}', '{"e":null,"a":1}'],
    ['[1,2]', '{"a":"b","c":null}', '{"a":"b"}'],
    ['{}', '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'],
  ])('RFC 7386 example: %s patched with %s is %s', (target, patch, result) => {
    expect(applyMergePatch(json(target), json(patch))).toEqual(json(result));
  });

  it('RFC 7386 section 3 example: changes the title, drops a nested member, replaces an array, adds a member', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = {
      title: 'Hello!',
      phoneNumber: '+01-123-456-7890',
      author: { familyName: null },
      tags: ['example'],
    };
    expect(applyMergePatch(target, patch)).toEqual({
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('keeps the member order of the target and appends new members', () => {
    expect(Object.keys(applyMergePatch({ a: 1, b: 2, c: 3 }, { b: 9, d: 4, a: null }) as object)).toEqual([
      'b',
      'c',
      'd',
    ]);
  });

  it('works on frozen inputs and mutates neither', () => {
    const target = deepFreeze({ metadata: { labels: { a: '1', b: '2' } }, spec: { list: [1, 2] } });
    const patch = deepFreeze({ metadata: { labels: { a: null, c: '3' } }, spec: { list: [3] } });
    const result = applyMergePatch(target, patch);
    expect(result).toEqual({ metadata: { labels: { b: '2', c: '3' } }, spec: { list: [3] } });
    expect(target).toEqual({ metadata: { labels: { a: '1', b: '2' } }, spec: { list: [1, 2] } });
  });

  it('shares no object with its inputs', () => {
    const target = { kept: { deep: [1] } };
    const patch = { added: { deep: [2] } };
    const result = applyMergePatch(target, patch) as { kept: { deep: number[] }; added: { deep: number[] } };
    result.kept.deep.push(9);
    result.added.deep.push(9);
    expect(target.kept.deep).toEqual([1]);
    expect(patch.added.deep).toEqual([2]);
    const replaced = applyMergePatch({}, [{ a: 1 }]) as { a: number }[];
    expect(replaced).not.toBe(patch);
  });

  it('treats __proto__, constructor and prototype in a patch as plain members', () => {
    const patch = json(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"x":{"__proto__":{"y":1}}}',
    );
    const result = applyMergePatch({ keep: 1 }, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toEqual({ polluted: true });
    expect(result.constructor).toEqual({ prototype: { polluted: true } });
    expect(Object.hasOwn(result.x as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not read inherited members of the target: deleting constructor from {} changes nothing', () => {
    expect(applyMergePatch({}, { constructor: null, toString: null })).toEqual({});
    expect(applyMergePatch({}, { constructor: { a: 1 } })).toEqual({ constructor: { a: 1 } });
  });

  it('treats members whose value is undefined as absent, as JSON would', () => {
    expect(applyMergePatch({ a: 1, b: undefined }, { a: undefined, c: 2 })).toEqual({ a: 1, c: 2 });
    expect(Object.keys(applyMergePatch({ a: 1, b: undefined }, {}) as object)).toEqual(['a']);
  });
});

describe('createMergePatch', () => {
  it('is {} for equal objects, whatever their key order', () => {
    expect(createMergePatch({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual({});
  });

  it('lists changed and added members, null for removed ones, and recurses into objects', () => {
    expect(
      createMergePatch(
        { spec: { replicas: 1, paused: true, template: { image: 'a', env: ['X=1'] } }, keep: 'x', drop: 'y' },
        { spec: { replicas: 3, template: { image: 'a', env: ['X=2'] } }, keep: 'x', extra: { n: 1 } },
      ),
    ).toEqual({
      spec: { replicas: 3, paused: null, template: { env: ['X=2'] } },
      drop: null,
      extra: { n: 1 },
    });
  });

  it('gives the whole new value when a member changes type', () => {
    expect(createMergePatch({ a: 'text' }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
    expect(createMergePatch({ a: { b: 1 } }, { a: [1] })).toEqual({ a: [1] });
  });

  it('is the modified value itself when either side is not an object, even when they are equal', () => {
    expect(createMergePatch([1], [1])).toEqual([1]);
    expect(createMergePatch({ a: 1 }, 'x')).toBe('x');
    expect(createMergePatch(5, { a: 1 })).toEqual({ a: 1 });
    expect(applyMergePatch([1], createMergePatch([1], [1]))).toEqual([1]);
  });

  it('handles __proto__ members as plain data in both inputs', () => {
    const original = json('{"__proto__":{"a":1},"k":1}');
    const modified = json('{"__proto__":{"a":2},"k":1}');
    const patch = createMergePatch(original, modified) as object;
    expect(Object.getPrototypeOf(patch)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(patch, '__proto__')?.value).toEqual({ a: 2 });
    expect(applyMergePatch(original, patch)).toEqual(modified);
  });
});
