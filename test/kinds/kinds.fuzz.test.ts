/**
 * Properties of `defineKind` and `crdsOf` against the embedded API server's own CRD and object
 * validation (`@converge/apiserver`'s validation, the code its HTTP handlers run): every schema built
 * from the supported TypeBox constructors gives a CRD the server accepts, every value TypeBox's
 * `Value.Check` accepts is accepted (and stored unchanged), and unsupported or malformed input
 * is a typed error, never a crash.
 */
import { compileCrdValidations, validateCustomResource } from '@converge/apiserver';
import { crdsOf, defineKind, KindOptionsError, KindSchemaError, type TSchema, Type } from '@converge/kube';
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { generated, unsupported } from './arbitraries.ts';

const base = { group: 'example.com', version: 'v1', kind: 'Gadget' } as const;

describe('defineKind with random TypeBox schemas', () => {
  it('gives a CRD the API server accepts, and the server accepts every value TypeBox accepts', () => {
    const cases = generated(3).chain((g) =>
      fc.tuple(fc.constant(g.schema), fc.array(g.values, { minLength: 1, maxLength: 3 })),
    );
    fc.assert(
      fc.property(cases, fc.boolean(), ([schema, values], withStatus) => {
        const spec = Type.Object({ field: schema });
        const kind = defineKind({ ...base, spec, ...(withStatus ? { status: spec } : {}) });
        const [crd] = crdsOf([kind]);
        if (crd === undefined) throw new Error('no CRD');
        expect(compileCrdValidations(crd)).toEqual([]);
        for (const value of values) {
          const object = {
            apiVersion: 'example.com/v1',
            kind: 'Gadget',
            metadata: { name: 'g' },
            spec: { field: value },
          };
          expect(Value.Check(spec, object.spec)).toBe(true);
          const result = validateCustomResource(crd, object);
          expect(result.message).toBeUndefined();
          expect(result.warnings).toEqual([]);
          expect(result.object).toEqual(object);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses schemas that cannot be structural with a KindSchemaError naming the path', () => {
    fc.assert(
      fc.property(unsupported, fc.constantFrom('a', 'nested'), (schema, where) => {
        const spec =
          where === 'a'
            ? Type.Object({ a: schema })
            : Type.Object({ n: Type.Array(Type.Object({ deep: schema })) });
        const thrown = (() => {
          try {
            defineKind({ ...base, spec });
          } catch (error) {
            return error;
          }
          return undefined;
        })();
        expect(thrown).toBeInstanceOf(KindSchemaError);
        const path = (thrown as KindSchemaError).path;
        expect(path.startsWith(where === 'a' ? 'spec.a' : 'spec.n[*].deep')).toBe(true);
      }),
    );
  });
});

/** Random JSON schemas: a type (or none) with random keywords of random values, nested. */
const KEYWORDS = [
  'description',
  'format',
  'default',
  'nullable',
  'enum',
  'x-kubernetes-validations',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'title',
  'example',
  'externalDocs',
  'minimum',
  'maxLength',
  'minItems',
  'maxProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-list-map-keys',
  'pattern',
  'required',
  'uniqueItems',
  'multipleOf',
  'exclusiveMaximum',
];
const keywordValue = fc.oneof(
  fc.constantFrom('a', '^[a-z]+$', '[', 'int32', 'date-time', 'map', 'set', 'atomic', 'granular'),
  fc.integer({ min: -2, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.constantFrom('a', 'b', 1)),
  // A rule that compiles on any type: CEL type errors are the server's to report.
  fc.constant([{ rule: 'true', message: 'never' }]),
  fc.constant({ a: 'b' }),
  fc.constant({ description: 'd', url: 'https://example.com' }),
  fc.constant(['a']),
);
const jsonSchema: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant({ type: 'string' }),
    fc
      .tuple(
        fc.constantFrom('string', 'integer', 'number', 'boolean', 'object', 'array', undefined),
        fc.dictionary(fc.constantFrom(...KEYWORDS), keywordValue, { maxKeys: 2 }),
        tie('node'),
        fc.dictionary(fc.constantFrom('a', 'b'), tie('node'), { maxKeys: 2 }),
        fc.boolean(),
      )
      .map(([type, keywords, inner, properties, map]) => {
        const node: Record<string, unknown> = type === undefined ? {} : { type };
        if (type === 'array') node.items = inner;
        if (type === 'object') node[map ? 'additionalProperties' : 'properties'] = map ? inner : properties;
        return { ...node, ...keywords };
      }),
  ),
})).node;

describe('defineKind with random JSON schemas', () => {
  it('refuses with a KindSchemaError, or gives a CRD the API server accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(jsonSchema, (schema) => {
        let kind: ReturnType<typeof defineKind>;
        try {
          kind = defineKind({ ...base, spec: Type.Object({ x: schema as TSchema }) });
        } catch (error) {
          expect(error).toBeInstanceOf(KindSchemaError);
          return;
        }
        accepted += 1;
        const [crd] = crdsOf([kind]);
        if (crd === undefined) throw new Error('no CRD');
        expect(compileCrdValidations(crd)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
    // The generator is not so wild that nothing passes.
    expect(accepted).toBeGreaterThan(500);
  });
});

describe('defineKind with malformed options', () => {
  const anything = fc.oneof(fc.anything(), fc.constant(undefined));
  const options = fc.record(
    {
      group: fc.oneof(fc.constantFrom('example.com', 'Example.com', 'nodot', ''), anything),
      version: fc.oneof(fc.constantFrom('v1', 'V1', '1v', 'v1_beta'), anything),
      kind: fc.oneof(fc.constantFrom('Gadget', 'gadget', 'Gad get'), anything),
      plural: fc.oneof(fc.constantFrom('gadgets', 'Gadgets'), anything),
      scope: fc.oneof(fc.constantFrom('Namespaced', 'Cluster', 'Global'), anything),
      spec: fc.oneof(fc.constant(Type.Object({})), anything),
      status: anything,
      shortNames: fc.oneof(fc.constant(['gd']), fc.array(fc.string()), anything),
      printerColumns: fc.oneof(
        fc.constant([{ name: 'A', type: 'string', jsonPath: '.spec.a' }]),
        fc.array(fc.record({ name: anything, type: fc.constantFrom('string', 'text'), jsonPath: anything })),
        anything,
      ),
      scale: fc.oneof(
        fc.constant({ specReplicasPath: '.spec.r', statusReplicasPath: '.status.r' }),
        anything,
      ),
      validations: fc.oneof(
        fc.constant([{ rule: 'true' }]),
        fc.array(fc.record({ rule: anything })),
        anything,
      ),
      served: anything,
    },
    { requiredKeys: [] },
  );

  it('throws a typed error (never anything else) for any options object', () => {
    fc.assert(
      fc.property(fc.oneof(options, fc.anything()), (value) => {
        try {
          defineKind(value as Parameters<typeof defineKind>[0]);
        } catch (error) {
          expect(error instanceof KindOptionsError || error instanceof KindSchemaError).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('names the option that is wrong', () => {
    const spec = Type.Object({});
    const field = (options: unknown): string => {
      try {
        defineKind(options as Parameters<typeof defineKind>[0]);
      } catch (error) {
        if (error instanceof KindOptionsError) return error.field;
        throw error;
      }
      return '';
    };
    expect(field({ ...base, group: 'example', spec })).toBe('group');
    expect(field({ ...base, version: 'V1', spec })).toBe('version');
    expect(field({ ...base, kind: 'gadget', spec })).toBe('kind');
    expect(field({ ...base, spec, shortNames: ['gd', 'gd'] })).toBe('shortNames[1]');
    expect(field({ ...base, spec, printerColumns: [{ name: 'A', type: 'text', jsonPath: '.a' }] })).toBe(
      'printerColumns[0].type',
    );
    expect(
      field({ ...base, spec, scale: { specReplicasPath: '.status.r', statusReplicasPath: '.status.r' } }),
    ).toBe('scale.specReplicasPath');
    expect(field({ ...base, spec, validations: [{ rule: '' }] })).toBe('validations[0].rule');
    expect(field({ ...base, spec, colour: 'red' })).toBe('colour');
    expect(field({ ...base })).toBe('spec');
  });
});
