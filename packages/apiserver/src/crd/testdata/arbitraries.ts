/**
 * fast-check arbitraries: random structural schemas (with valid defaults) and, for each schema,
 * objects that satisfy it.
 */
import fc from 'fast-check';
import type { CustomResourceDefinition, StructuralSchema } from '../types.ts';

type Schema = StructuralSchema;

const PATTERNS: Record<string, RegExp> = {
  '^[a-z]+$': /^[a-z]+$/,
  '^[0-9]{3}$': /^[0-9]{3}$/,
  '^v[0-9]+(\\.[0-9]+)?$': /^v[0-9]+(\.[0-9]+)?$/,
};

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  'date-time': fc
    .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  date: fc
    .date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  uuid: fc.uuid(),
  ipv4: fc.ipV4(),
  hostname: fc.stringMatching(/^[a-z]{1,10}(\.[a-z]{2,5}){1,2}$/),
  byte: fc.base64String({ minLength: 4, maxLength: 24 }),
};

const NAMES = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'eps', 'size', 'name2', 'mode', 'items_');

const stringSchema: fc.Arbitrary<Schema> = fc.oneof(
  fc.record({ type: fc.constant('string') }),
  fc.record({
    type: fc.constant('string'),
    minLength: fc.integer({ min: 0, max: 3 }),
    maxLength: fc.integer({ min: 3, max: 8 }),
  }),
  fc.record({
    type: fc.constant('string'),
    enum: fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ type: fc.constant('string'), pattern: fc.constantFrom(...Object.keys(PATTERNS)) }),
  fc.record({ type: fc.constant('string'), format: fc.constantFrom(...Object.keys(FORMATS)) }),
);

const integerSchema: fc.Arbitrary<Schema> = fc
  .record({
    lo: fc.integer({ min: -1000, max: 0 }),
    span: fc.integer({ min: 10, max: 1000 }),
    exclusive: fc.boolean(),
    multipleOf: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    format: fc.constantFrom(undefined, 'int32', 'int64'),
  })
  .map(({ lo, span, exclusive, multipleOf, format }) => ({
    type: 'integer',
    minimum: lo,
    maximum: lo + span,
    ...(exclusive ? { exclusiveMinimum: true, exclusiveMaximum: true } : {}),
    ...(multipleOf === undefined ? {} : { multipleOf }),
    ...(format === undefined ? {} : { format }),
  }));

const numberSchema: fc.Arbitrary<Schema> = fc.oneof(
  fc.record({ type: fc.constant('number'), minimum: fc.constant(-100), maximum: fc.constant(100) }),
  fc.record({ type: fc.constant('number'), multipleOf: fc.constant(0.5) }),
);

const scalar: fc.Arbitrary<Schema> = fc.oneof(
  stringSchema,
  integerSchema,
  numberSchema,
  fc.constant({ type: 'boolean' }),
  fc.constant({ 'x-kubernetes-int-or-string': true }),
);

/** Valid values of a schema (ignoring `default`, which only matters to `applyDefaults`). */
export function arbitraryValue(schema: Schema): fc.Arbitrary<unknown> {
  const base = baseValueOf(schema);
  return schema.nullable === true ? fc.oneof(fc.constant(null), base) : base;
}

function baseValueOf(s: Schema): fc.Arbitrary<unknown> {
  if (s.enum !== undefined) return fc.constantFrom(...s.enum);
  if (s['x-kubernetes-int-or-string'] === true) return fc.oneof(fc.integer(), fc.string());
  if (s['x-kubernetes-embedded-resource'] === true) {
    return fc.record({
      apiVersion: fc.constant('v1'),
      kind: fc.constant('ConfigMap'),
      metadata: fc.record({ name: fc.stringMatching(/^[a-z]{1,8}$/) }),
      data: fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    });
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === true)
    return fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  switch (s.type ?? '') {
    case 'string':
      if (s.pattern !== undefined) return fc.stringMatching(PATTERNS[s.pattern] ?? /^$/);
      if (s.format !== undefined) return FORMATS[s.format] ?? fc.string();
      return fc.string({ minLength: s.minLength ?? 0, maxLength: s.maxLength ?? 10, unit: 'grapheme-ascii' });
    case 'integer': {
      const lo = (s.minimum ?? -1000) + (s.exclusiveMinimum === true ? 1 : 0);
      const hi = (s.maximum ?? 1000) - (s.exclusiveMaximum === true ? 1 : 0);
      const m = s.multipleOf ?? 1;
      return fc.integer({ min: Math.ceil(lo / m), max: Math.floor(hi / m) }).map((k) => k * m);
    }
    case 'number':
      if (s.multipleOf === 0.5) return fc.integer({ min: -200, max: 200 }).map((k) => k + 0.5);
      return fc.double({
        min: s.minimum ?? -100,
        max: s.maximum ?? 100,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = arbitraryValue(s.items ?? {});
      const size = { minLength: s.minItems ?? 0, maxLength: s.maxItems ?? 4 };
      if (s['x-kubernetes-list-type'] === 'set')
        return fc.uniqueArray(item, { ...size, selector: (v) => JSON.stringify(v) });
      if (s['x-kubernetes-list-type'] === 'map')
        return fc.uniqueArray(item, { ...size, selector: (v) => (v as { name: string }).name });
      return fc.array(item, size);
    }
    default: {
      if (typeof s.additionalProperties === 'object') {
        return fc.dictionary(fc.string({ maxLength: 8 }), arbitraryValue(s.additionalProperties), {
          maxKeys: s.maxProperties ?? 3,
        });
      }
      const props = s.properties ?? {};
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, p] of Object.entries(props)) model[k] = arbitraryValue(p);
      return fc.record(model, { requiredKeys: [...(s.required ?? [])] });
    }
  }
}

/** Attaches a valid default to a schema, sometimes. */
function withDefault(schema: fc.Arbitrary<Schema>): fc.Arbitrary<Schema> {
  return schema.chain((s) =>
    fc
      .option(baseValueOf(s), { nil: undefined, freq: 3 })
      .map((d) => (d === undefined ? s : { ...s, default: d })),
  );
}

function nullable(schema: fc.Arbitrary<Schema>): fc.Arbitrary<Schema> {
  // kube rejects null for an enum even when nullable, and int-or-string cannot be nullable in practice.
  return fc
    .tuple(schema, fc.boolean())
    .map(([s, n]) =>
      n && s['x-kubernetes-int-or-string'] !== true && s.enum === undefined ? { ...s, nullable: true } : s,
    );
}

const { node } = fc.letrec<{ node: Schema; object: Schema }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    withDefault(nullable(scalar)),
    tie('object'),
    fc.record({ type: fc.constant('array'), items: withDefault(scalar), maxItems: fc.constant(4) }),
    fc.record({
      type: fc.constant('array'),
      items: stringSchema,
      'x-kubernetes-list-type': fc.constant('set'),
    }),
    fc.record({
      type: fc.constant('array'),
      'x-kubernetes-list-type': fc.constant('map'),
      'x-kubernetes-list-map-keys': fc.constant(['name']),
      items: fc.record({
        type: fc.constant('object'),
        required: fc.constant(['name']),
        properties: fc.record({ name: fc.constant({ type: 'string' }), value: scalar }),
      }),
    }),
    fc.record({
      type: fc.constant('object'),
      additionalProperties: scalar,
      maxProperties: fc.integer({ min: 1, max: 4 }),
    }),
    fc.constant({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
    fc.constant({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    }),
  ),
  object: withDefault(
    fc.dictionary(NAMES, tie('node'), { maxKeys: 4 }).chain((properties) =>
      fc.subarray(Object.keys(properties)).map((required) => ({
        type: 'object',
        properties,
        ...(required.length > 0 ? { required } : {}),
      })),
    ),
  ),
}));

/** Root schemas: `spec` (and sometimes `status`) under an object root. */
export const rootSchema: fc.Arbitrary<Schema> = fc
  .record({ spec: node, status: fc.option(node, { nil: undefined }) })
  .map(({ spec, status }) => ({
    type: 'object',
    properties: { spec, ...(status === undefined ? {} : { status }) },
  }));

/** A schema and a valid object for it (with TypeMeta and ObjectMeta at the root). */
export const schemaAndObject: fc.Arbitrary<{ schema: Schema; object: Record<string, unknown> }> =
  rootSchema.chain((schema) =>
    arbitraryValue(schema).map((value) => ({
      schema,
      object: {
        apiVersion: 'example.com/v1',
        kind: 'Thing',
        metadata: { name: 'thing', namespace: 'default' },
        ...(value as object),
      },
    })),
  );

/** A CRD serving `schema`. */
export function crdFor(schema: Schema): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: {
      group: 'example.com',
      names: { plural: 'things', kind: 'Thing' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

/** Removes keys at random (to let defaults fill them in). */
export function dropKeys(value: unknown, keep: (path: string) => boolean, at = ''): unknown {
  if (Array.isArray(value)) return value.map((v, i) => dropKeys(v, keep, `${at}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = `${at}.${k}`;
    if (keep(p))
      Object.defineProperty(out, k, {
        value: dropKeys(v, keep, p),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}
