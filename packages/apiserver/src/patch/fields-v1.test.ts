import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { FieldSet } from './field-set.ts';
import { fromFieldsV1, toFieldsV1 } from './fields-v1.ts';
import { fieldsV1Of } from './fields-v1-of.ts';
import {
  fieldElement,
  keyElement,
  type PathElement,
  pathString,
  serializeElement,
  valueElement,
} from './path-element.ts';

describe('fieldsV1Of', () => {
  it('encodes fields, map keys, set values and list keys of a Pod the way the apiserver does', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', labels: { app: 'web' }, finalizers: ['x/y'] },
      spec: {
        containers: [{ name: 'app', image: 'nginx', env: [{ name: 'A', value: '1' }], args: ['-v'] }],
        nodeSelector: { disk: 'ssd' },
      },
    };
    expect(fieldsV1Of(pod, patchSchemaFor('', 'v1', 'Pod'))).toEqual({
      'f:metadata': { 'f:finalizers': { 'v:"x/y"': {} }, 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"app"}': {
            '.': {},
            'f:args': {},
            'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
            'f:image': {},
            'f:name': {},
          },
        },
        'f:nodeSelector': {},
      },
    });
  });

  it('orders keys as Go does: fields, then list keys, then values, each sorted', () => {
    const keys = Object.keys(
      toFieldsV1(
        new FieldSet()
          .insert([valueElement('b')])
          .insert([fieldElement('z')])
          .insert([keyElement([['n', 'a']])])
          .insert([fieldElement('a')]),
      ),
    );
    expect(keys).toEqual(['f:a', 'f:z', 'k:{"n":"a"}', 'v:"b"']);
  });

  it('escapes HTML characters inside list keys as Go does', () => {
    const set = new FieldSet().insert([keyElement([['name', 'a<b>&c']])]);
    expect(Object.keys(toFieldsV1(set))).toEqual(['k:{"name":"a\\u003cb\\u003e\\u0026c"}']);
  });

  it('an empty object and a null are owned as leaves', () => {
    expect(fieldsV1Of({ spec: { a: {}, b: null } }, undefined)).toEqual({
      'f:spec': { 'f:a': {}, 'f:b': {} },
    });
  });
});

describe('fromFieldsV1', () => {
  it.each([
    ['a value that is not an object', { 'f:a': 1 }],
    ['an unknown element type', { 'x:a': {} }],
    ['a key element that is not an object', { 'k:[1]': {} }],
    ['an index that is not a number', { 'i:one': {} }],
    ['a list', [] as unknown],
  ])('refuses %s', (_title, value) => {
    expect(fromFieldsV1(value)).toBeUndefined();
  });

  it('reads "." as membership of the node itself', () => {
    const set = fromFieldsV1({ 'f:data': { '.': {}, 'f:a': {} } });
    expect(set?.paths().map(pathString)).toEqual(['.data', '.data.a']);
  });
});

const element: fc.Arbitrary<PathElement> = fc.oneof(
  fc.string({ maxLength: 4 }).map(fieldElement),
  fc
    .record({ k: fc.string({ maxLength: 3 }), v: fc.oneof(fc.string({ maxLength: 3 }), fc.integer()) })
    .map(({ k, v }) => keyElement([[k, v]])),
  fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean()).map(valueElement),
  fc.nat(20).map((index): PathElement => ({ kind: 'index', index })),
);
const sets = fc.array(fc.array(element, { minLength: 1, maxLength: 4 }), { maxLength: 12 }).map((paths) => {
  const set = new FieldSet();
  for (const path of paths) set.insert(path);
  return set;
});
/** Paths by their FieldsV1 spelling (the human spelling is ambiguous: `[=""]` is a value or a key named ""). */
const pathsOf = (set: FieldSet) =>
  set
    .paths()
    .map((path) => JSON.stringify(path.map(serializeElement)))
    .sort();

describe('field sets (properties)', () => {
  it('FieldsV1 encoding round-trips every set', () => {
    fc.assert(
      fc.property(sets, (set) => {
        const decoded = fromFieldsV1(JSON.parse(JSON.stringify(toFieldsV1(set))));
        expect(decoded && pathsOf(decoded)).toEqual(pathsOf(set));
      }),
    );
  });

  it('union, intersection and difference agree with the sets of their paths', () => {
    fc.assert(
      fc.property(sets, sets, (a, b) => {
        const pa = new Set(pathsOf(a));
        const pb = new Set(pathsOf(b));
        expect(pathsOf(a.union(b))).toEqual([...new Set([...pa, ...pb])].sort());
        expect(pathsOf(a.intersection(b))).toEqual([...pa].filter((p) => pb.has(p)).sort());
        expect(pathsOf(a.difference(b))).toEqual([...pa].filter((p) => !pb.has(p)).sort());
        expect(a.difference(b).union(a.intersection(b)).paths().length).toBe(a.paths().length);
      }),
    );
  });
});
