import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crdStatus, establishedConditions } from './conditions.ts';
import { crdInfo, resourceTypesOf } from './crd-info.ts';
import { applyDefaults } from './defaults.ts';
import {
  CrdDecodeError,
  CrdInvalidError,
  CrdJsonPathError,
  CrdScaleError,
  CrdSchemaError,
} from './errors.ts';
import { openApiV3ForCrd } from './openapi.ts';
import { printerColumnValues } from './printer-columns.ts';
import { pruneUnknownFields } from './prune.ts';
import { scaleOf, validateScale } from './scale.ts';
import { crdFor } from './testdata/arbitraries.ts';
import { databaseCrd, pipelineCrd, websiteCrd, websiteSchema } from './testdata/crds.ts';
import type { StructuralSchema } from './types.ts';
import { validateCrd } from './validate-crd.ts';
import { validateCustomResource, validateCustomResourceStatus } from './validate-object.ts';

const RUNS = { numRuns: 400 };
const KEYWORDS = [
  'type',
  'format',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'enum',
  'default',
  'nullable',
  'maximum',
  'minimum',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  '$ref',
  'id',
  'x-kubernetes-validations',
  'description',
  'metadata',
  'kind',
  'spec',
];

const value = fc.oneof(
  fc.constantFrom(
    'object',
    'array',
    'string',
    'integer',
    'number',
    'boolean',
    'null',
    'map',
    'set',
    'atomic',
    'int32',
    'date-time',
    '^[a-z',
    '(?i)^a$',
    '',
  ),
  fc.integer({ min: -3, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.constantFrom('a', 'name', 'spec', 'metadata'), { maxLength: 3 }),
);

/** Schema-like objects: schema keywords with values of the right or the wrong type, nested. */
const { node: schemaish } = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    value,
    fc.dictionary(
      fc.constantFrom(...KEYWORDS),
      fc.oneof(
        value,
        tie('node'),
        fc.dictionary(fc.constantFrom('a', 'b', 'metadata', 'spec', 'name'), tie('node'), { maxKeys: 3 }),
        fc.array(tie('node'), { maxLength: 2 }),
      ),
      { maxKeys: 6 },
    ),
  ),
}));

function allPaths(
  value: unknown,
  at: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(at);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) allPaths(v, [...at, i], out);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) allPaths(v, [...at, k], out);
  }
  return out;
}

function mutate(
  root: unknown,
  path: readonly (string | number)[],
  replacement: unknown,
  remove: boolean,
): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  if (path.length === 0) return replacement;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (remove && !Array.isArray(node)) delete node[last];
  else node[last] = replacement;
  return copy;
}

const mutation = fc.tuple(fc.nat(), fc.oneof(value, schemaish), fc.boolean());
const mutatedCrd = fc
  .tuple(
    fc.constantFrom(websiteCrd, databaseCrd, pipelineCrd),
    fc.array(mutation, { minLength: 1, maxLength: 3 }),
  )
  .map(([crd, mutations]) =>
    mutations.reduce<unknown>((current, [n, replacement, remove]) => {
      const paths = allPaths(current);
      return mutate(current, paths[n % paths.length] ?? [], replacement, remove);
    }, crd),
  );

function isCause(c: unknown): boolean {
  const cause = c as { reason?: unknown; message?: unknown; field?: unknown };
  return (
    typeof cause.reason === 'string' && typeof cause.message === 'string' && typeof cause.field === 'string'
  );
}

describe('fuzzing with malformed input', () => {
  it('validateCrd returns causes or throws CrdDecodeError for mutated CRDs, and accepted ones are servable', () => {
    fc.assert(
      fc.property(mutatedCrd, (crd) => {
        let causes: unknown[];
        try {
          causes = validateCrd(crd);
        } catch (error) {
          expect(error).toBeInstanceOf(CrdDecodeError);
          return;
        }
        expect(causes.every(isCause)).toBe(true);
        const typed = crd as typeof websiteCrd;
        if (causes.length > 0) {
          expect(() => crdInfo(typed)).toThrow(CrdInvalidError);
          return;
        }
        const info = crdInfo(typed);
        resourceTypesOf(typed);
        openApiV3ForCrd(typed);
        establishedConditions(typed, '2026-01-01T00:00:00Z');
        crdStatus(typed, '2026-01-01T00:00:00Z');
        for (const v of info.versions) {
          try {
            printerColumnValues({ spec: {}, status: {} }, v.printerColumns);
          } catch (error) {
            expect(error).toBeInstanceOf(CrdJsonPathError);
          }
        }
      }),
      RUNS,
    );
  });

  it('schema-shaped garbage either works everywhere or is a CrdSchemaError', () => {
    fc.assert(
      fc.property(schemaish, fc.jsonValue({ maxDepth: 3 }), (schema, object) => {
        try {
          const causes = validateCustomResource(schema as StructuralSchema, object);
          expect(causes.every(isCause)).toBe(true);
          const { object: pruned } = pruneUnknownFields(schema as StructuralSchema, object);
          applyDefaults(schema as StructuralSchema, pruned);
          validateCustomResourceStatus(schema as StructuralSchema, object);
        } catch (error) {
          expect(error).toBeInstanceOf(CrdSchemaError);
        }
        try {
          expect(validateCrd(crdFor(schema as StructuralSchema)).every(isCause)).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(CrdDecodeError);
        }
      }),
      RUNS,
    );
  });

  it('arbitrary objects never crash validation, pruning, defaulting, columns or scale', () => {
    const columns = crdInfo(websiteCrd).versions[0]?.printerColumns ?? [];
    const scale = {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    };
    const objects = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({
        spec: fc.jsonValue({ maxDepth: 3 }),
        status: fc.jsonValue({ maxDepth: 3 }),
        metadata: fc.jsonValue({ maxDepth: 2 }),
      }),
    );
    fc.assert(
      fc.property(objects, (object) => {
        const { object: pruned } = pruneUnknownFields(websiteSchema, object);
        const defaulted = applyDefaults(websiteSchema, pruned);
        expect(validateCustomResource(websiteSchema, defaulted).every(isCause)).toBe(true);
        expect(printerColumnValues(defaulted, columns)).toHaveLength(columns.length);
        expect(validateScale(defaulted, scale).every(isCause)).toBe(true);
        try {
          scaleOf(defaulted, scale);
        } catch (error) {
          expect(error).toBeInstanceOf(CrdScaleError);
        }
      }),
      RUNS,
    );
  });
});
