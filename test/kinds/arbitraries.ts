/**
 * fast-check arbitraries of TypeBox schemas built from the constructors `defineKind` supports, each
 * with an arbitrary of values it accepts, and of schemas it must refuse with a typed error.
 */
import { IntOrString, type TSchema, Type } from '@converge/kube';
import fc from 'fast-check';

/** A schema and an arbitrary of values for it. */
export interface Generated {
  readonly schema: TSchema;
  readonly values: fc.Arbitrary<unknown>;
}

const names = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'host', 'port', 'x-y', 'a.b', 'with space');
const descriptions = fc.option(
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom("it's */ tricky", 'line\nbreak', 'A sentence. And another one.', '`code` and "quotes"'),
  ),
  { nil: undefined },
);

function withDescription<T extends Record<string, unknown>>(options: T, description: string | undefined): T {
  return description === undefined ? options : { ...options, description };
}

const stringNode: fc.Arbitrary<Generated> = fc
  .record({
    min: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    extra: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
    pattern: fc.boolean(),
    description: descriptions,
  })
  .map(({ min, extra, pattern, description }) => {
    const maxLength = extra === undefined ? undefined : (min ?? 0) + extra;
    const options = withDescription(
      {
        ...(min === undefined ? {} : { minLength: min }),
        ...(maxLength === undefined ? {} : { maxLength }),
        ...(pattern ? { pattern: '^[a-z]*$' } : {}),
      },
      description,
    );
    const lengths = { minLength: min ?? 0, maxLength: maxLength ?? 8 };
    const values = pattern
      ? fc
          .stringMatching(/^[a-z]*$/)
          .filter((s) => s.length >= lengths.minLength && s.length <= lengths.maxLength)
      : fc.string({ ...lengths, unit: 'grapheme-ascii' });
    return { schema: Type.String(options), values };
  });

const integerNode: fc.Arbitrary<Generated> = fc
  .record({
    min: fc.option(fc.integer({ min: -100, max: 100 }), { nil: undefined }),
    span: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
    format: fc.constantFrom(undefined, 'int32', 'int64'),
    description: descriptions,
  })
  .map(({ min, span, format, description }) => {
    const max = span === undefined ? undefined : (min ?? 0) + span;
    const options = withDescription(
      {
        ...(min === undefined ? {} : { minimum: min }),
        ...(max === undefined ? {} : { maximum: max }),
        ...(format === undefined ? {} : { format }),
      },
      description,
    );
    return {
      schema: Type.Integer(options),
      values: fc.integer({ min: min ?? -(2 ** 31), max: max ?? 2 ** 31 - 1 }),
    };
  });

const numberNode: fc.Arbitrary<Generated> = fc
  .record({ min: fc.option(fc.integer({ min: -10, max: 10 }), { nil: undefined }), exclusive: fc.boolean() })
  .map(({ min, exclusive }) => {
    const options = min === undefined ? {} : exclusive ? { exclusiveMinimum: min } : { minimum: min };
    const values = fc
      .double({ noNaN: true, noDefaultInfinity: true, min: min ?? -1e6, max: 1e6 })
      .filter((v) => !Object.is(v, -0) && (min === undefined || !exclusive || v > min));
    return { schema: Type.Number(options), values };
  });

const leaf: fc.Arbitrary<Generated> = fc.oneof(
  stringNode,
  integerNode,
  numberNode,
  fc.constant({ schema: Type.Boolean(), values: fc.boolean() }),
  fc
    .uniqueArray(fc.constantFrom('red', 'green', 'blue', "it's", 'a b'), { minLength: 1, maxLength: 4 })
    .map((literals) => ({
      schema:
        literals.length === 1
          ? Type.Literal(literals[0] as string)
          : Type.Union(literals.map((l) => Type.Literal(l))),
      values: fc.constantFrom(...literals),
    })),
  fc.constant({
    schema: IntOrString(),
    values: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
  }),
  fc.constant({
    schema: Type.Unknown(),
    values: fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== null),
  }),
);

/** Schemas of every supported constructor, nested up to `depth`. */
export function generated(depth: number): fc.Arbitrary<Generated> {
  if (depth === 0) return leaf;
  const inner = generated(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 2,
      arbitrary: fc
        .uniqueArray(fc.tuple(names, inner, fc.boolean(), descriptions), {
          maxLength: 4,
          selector: ([name]) => name,
        })
        .map((fields) => {
          const properties: Record<string, TSchema> = {};
          const model: Record<string, fc.Arbitrary<unknown>> = {};
          const required: string[] = [];
          for (const [name, g, optional, description] of fields) {
            const schema = description === undefined ? g.schema : { ...g.schema, description };
            properties[name] = optional ? Type.Optional(schema) : schema;
            model[name] = g.values;
            if (!optional) required.push(name);
          }
          return { schema: Type.Object(properties), values: fc.record(model, { requiredKeys: required }) };
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(inner, fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 3 }))
        .map(([g, min, extra]) => ({
          schema: Type.Array(g.schema, { minItems: min, maxItems: min + extra }),
          values: fc.array(g.values, { minLength: min, maxLength: min + extra }),
        })),
    },
    {
      weight: 1,
      arbitrary: stringNode.map((g) => ({
        schema: Type.Array(g.schema, { uniqueItems: true }),
        values: fc.uniqueArray(g.values, { maxLength: 4 }),
      })),
    },
    {
      weight: 1,
      arbitrary: inner.map((g) => ({
        schema: Type.Record(Type.String(), g.schema),
        values: fc.dictionary(fc.string({ minLength: 1, maxLength: 6, unit: 'grapheme-ascii' }), g.values, {
          maxKeys: 3,
        }),
      })),
    },
    {
      weight: 1,
      arbitrary: inner
        // Not int-or-string (already a union) nor an enum (kube never matches null in an enum).
        .filter(
          (g) =>
            !('x-kubernetes-int-or-string' in g.schema) && !('const' in g.schema) && !('anyOf' in g.schema),
        )
        .map((g) => ({
          schema: Type.Union([g.schema, Type.Null()]),
          values: fc.oneof(g.values, fc.constant(null)),
        })),
    },
  );
}

/** Schemas `defineKind` must refuse with a KindSchemaError: not structural in Kubernetes. */
export const unsupported: fc.Arbitrary<TSchema> = fc.oneof(
  fc.constant(Type.Union([Type.String(), Type.Number()])),
  fc.constant(Type.Union([Type.String(), Type.Integer({ minimum: 1 })])),
  fc.constant(Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])),
  fc.constant(Type.Tuple([Type.String(), Type.Integer()])),
  fc.constant(Type.Ref('Other')),
  fc.constant(Type.Cyclic({ Node: Type.Object({ next: Type.Optional(Type.Ref('Node')) }) }, 'Node')),
  fc.constant(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])),
  fc.constant(Type.Record(Type.Number(), Type.String())),
  fc.constant(Type.Null()),
  fc.constant(Type.Array(Type.Object({ a: Type.String() }), { uniqueItems: true })),
  fc.constant(Type.Union([Type.Literal('a'), Type.Literal(1)])),
  fc.constant(Type.String({ contains: 'x' })),
  fc.constant(Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Null()])),
  fc.constant(Type.Union([Type.Union([Type.Literal('a'), Type.Literal('b')]), Type.Null()])),
  fc.constant(Type.Unsafe<'a' | null>({ enum: ['a', null] })),
);
