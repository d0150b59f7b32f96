import { applyJsonPatch, deepEqual } from '@converge/runtime';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { createJsonPatch, escapePointerToken } from './json-patch-diff.ts';

/** Keys that need escaping or look like array syntax, and ordinary ones. */
const keyArb = fc.oneof(
  fc.constantFrom('a', 'b', 'spec', 'a/b', 'm~n', '~1', '~0/', '', '-', '0', '10', 'constructor', 'ü €'),
  fc.string({ maxLength: 6 }).filter((key) => key !== '__proto__'),
);

const valueArb: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string(),
    ),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Documents as `JSON.parse` makes them (ordinary prototypes, no -0). */
const documentArb = fc
  .dictionary(keyArb, valueArb, { maxKeys: 6 })
  .map((document) => JSON.parse(JSON.stringify(document)) as Record<string, unknown>);

type Edit = {
  readonly pick: number;
  readonly action: 'set' | 'delete' | 'push' | 'pop';
  readonly key: string;
  readonly value: unknown;
};

const editArb: fc.Arbitrary<Edit> = fc.record({
  pick: fc.nat(),
  action: fc.constantFrom('set', 'delete', 'push', 'pop'),
  key: keyArb,
  value: valueArb,
});

/** Every object and array inside `value`, `value` included. */
function containers(value: unknown, found: unknown[] = []): unknown[] {
  if (typeof value === 'object' && value !== null) {
    found.push(value);
    for (const member of Object.values(value)) containers(member, found);
  }
  return found;
}

/** `document` changed by `edits` (what a defaulter does: set, delete, grow and shrink lists). */
function mutate(document: Record<string, unknown>, edits: readonly Edit[]): Record<string, unknown> {
  const copy = structuredClone(document);
  for (const edit of edits) {
    const all = containers(copy);
    const target = all[edit.pick % all.length];
    if (Array.isArray(target)) {
      if (edit.action === 'push') target.push(edit.value);
      else if (edit.action === 'pop') target.pop();
      else if (target.length > 0) {
        const index = edit.pick % target.length;
        if (edit.action === 'set') target[index] = edit.value;
        else target.splice(index, 1);
      }
    } else {
      const object = target as Record<string, unknown>;
      if (edit.action === 'delete' || edit.action === 'pop') delete object[edit.key];
      else object[edit.key] = edit.value;
    }
  }
  // What the server does to a defaulter's result: plain JSON.
  return JSON.parse(JSON.stringify(copy)) as Record<string, unknown>;
}

/** Applies `patch` with fast-json-patch, validating every operation (a wrong op throws). */
function applyWithLibrary(document: unknown, patch: ReturnType<typeof createJsonPatch>): unknown {
  const operations = JSON.parse(JSON.stringify(patch)) as jsonpatch.Operation[];
  return jsonpatch.applyPatch(structuredClone(document), operations, true, true).newDocument;
}

/** JSON equality (vitest's equality reads an own `constructor` member as the object's class). */
function expectSame(actual: unknown, expected: unknown): void {
  expect(deepEqual(actual, expected), `${JSON.stringify(actual)} != ${JSON.stringify(expected)}`).toBe(true);
}

describe('createJsonPatch', () => {
  it('escapes ~ as ~0 and / as ~1, in that order', () => {
    expect(escapePointerToken('a/b~c~1')).toBe('a~1b~0c~01');
    expect(createJsonPatch({ 'a/b': 1, 'm~n': 2 }, { 'a/b': 3 })).toEqual([
      { op: 'remove', path: '/m~0n' },
      { op: 'replace', path: '/a~1b', value: 3 },
    ]);
  });

  it('is empty for equal documents, whatever the key order', () => {
    expect(createJsonPatch({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual([]);
  });

  it('adds and removes members, diffs equal-length arrays per element, replaces arrays that changed length', () => {
    expect(
      createJsonPatch(
        { spec: { replicas: 1, ports: [80, 443], tags: ['a'] }, stale: true },
        { spec: { replicas: 1, ports: [80, 8443], tags: ['a', 'b'], paused: false } },
      ),
    ).toEqual([
      { op: 'remove', path: '/stale' },
      { op: 'add', path: '/spec/paused', value: false },
      { op: 'replace', path: '/spec/tags', value: ['a', 'b'] },
      { op: 'replace', path: '/spec/ports/1', value: 8443 },
    ]);
  });

  it('replaces a value whose type changed (object to array, null to object)', () => {
    expect(createJsonPatch({ a: { b: 1 }, c: null }, { a: [1], c: { d: 1 } })).toEqual([
      { op: 'replace', path: '/c', value: { d: 1 } },
      { op: 'replace', path: '/a', value: [1] },
    ]);
  });

  it('treats __proto__ as an ordinary member', () => {
    const from = JSON.parse('{"__proto__":{"x":1},"a":1}') as unknown;
    const to = JSON.parse('{"__proto__":{"x":2},"a":1}') as unknown;
    const patch = createJsonPatch(from, to);
    expect(patch).toEqual([{ op: 'replace', path: '/__proto__/x', value: 2 }]);
    expect(deepEqual(applyJsonPatch(from, patch), to)).toBe(true);
  });

  it('does not overflow the stack on deeply nested documents', () => {
    let from: unknown = 1;
    let to: unknown = 2;
    for (let i = 0; i < 20_000; i++) {
      from = { n: from };
      to = { n: to };
    }
    expect(createJsonPatch(from, to)).toHaveLength(1);
  });

  it('gives a patch that turns the original into the mutated document exactly (fast-json-patch and the runtime agree)', () => {
    fc.assert(
      fc.property(documentArb, fc.array(editArb, { maxLength: 8 }), (from, edits) => {
        const to = mutate(from, edits);
        const patch = createJsonPatch(from, to);
        expectSame(applyWithLibrary(from, patch), to);
        expectSame(applyJsonPatch(from, patch), to);
        if (deepEqual(from, to)) expect(patch).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('gives a correct patch between unrelated documents too', () => {
    fc.assert(
      fc.property(documentArb, documentArb, (from, to) => {
        const patch = createJsonPatch(from, to);
        expectSame(applyWithLibrary(from, patch), to);
      }),
      { numRuns: 300 },
    );
  });
});
