import type { StatusCause } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type StructuralSchema, type ValidationRule, validateCustomResourceRules } from '../crd/index.ts';
import { type CrdLike, compileCrdValidations, validateCustomResource } from './index.ts';

function crdWith(spec: StructuralSchema): CrdLike {
  return {
    metadata: { name: 'websites.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'websites', kind: 'Website' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec } } },
        },
      ],
    },
  };
}

const texts = (causes: readonly StatusCause[]): string[] => causes.map((c) => `${c.field}: ${c.message}`);
const AT = 'spec.validation.openAPIV3Schema.properties[spec]';
const website = (spec: unknown): unknown => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'w1' },
  spec,
});

describe('a CRD whose rules do not compile is refused, as kube-apiserver refuses it', () => {
  const spec = (rules: readonly ValidationRule[]): StructuralSchema => ({
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      list: { type: 'array', maxItems: 4, items: { type: 'string', maxLength: 8 } },
    },
    'x-kubernetes-validations': rules,
  });

  it("with the rule printed as Go prints it and cel-go's located error", () => {
    expect(texts(compileCrdValidations(crdWith(spec([{ rule: 'self.replicas == true' }]))))).toEqual([
      `${AT}.x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas == true", ` +
        'Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", ' +
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, bool)'\n" +
        ' | self.replicas == true\n | ..............^',
    ]);
  });

  it.each([
    [
      'self.nope > 1',
      "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^",
    ],
    ['self.replicas', 'cel expression must evaluate to a bool'],
    [
      "self.list.exists(x, x.matches('[a'))",
      'program instantiation failed: error parsing regexp: missing closing ]: `[a`',
    ],
  ])('%s: %s', (rule, detail) => {
    const [cause] = compileCrdValidations(crdWith(spec([{ rule }])));
    expect(cause?.field).toBe(`${AT}.x-kubernetes-validations[0].rule`);
    expect(cause?.message.split('}: ')[1]).toBe(detail);
  });

  it('checks messageExpression, fieldPath and optionalOldSelf too', () => {
    const causes = compileCrdValidations(
      crdWith(
        spec([
          { rule: 'self.replicas > 0', messageExpression: 'self.replicas' },
          { rule: 'self.replicas > 0', fieldPath: '.nope' },
          { rule: 'self.replicas > 0', optionalOldSelf: true },
        ]),
      ),
    );
    expect(causes.map((c) => [c.field, c.message.split('}: ').at(-1)])).toEqual([
      [`${AT}.x-kubernetes-validations[0].messageExpression`, 'messageExpression must evaluate to a string'],
      [
        `${AT}.x-kubernetes-validations[1].fieldPath`,
        'Invalid value: ".nope": fieldPath must be a valid path',
      ],
      [
        `${AT}.x-kubernetes-validations[2].optionalOldSelf`,
        'Invalid value: true: may not be set if oldSelf is not used in rule',
      ],
    ]);
  });

  it('refuses a rule on a node CEL cannot type', () => {
    const causes = compileCrdValidations(
      crdWith({
        type: 'object',
        properties: {
          any: {
            'x-kubernetes-preserve-unknown-fields': true,
            'x-kubernetes-validations': [{ rule: 'true' }],
          },
        },
      }),
    );
    expect(texts(causes)).toEqual([
      `${AT}.properties[any].x-kubernetes-validations: Internal error: rule declared on schema that does not support validation rules type: '' x-kubernetes-preserve-unknown-fields: 'true'`,
    ]);
  });

  it('refuses oldSelf below a list that is not a map list', () => {
    const causes = compileCrdValidations(
      crdWith({
        type: 'object',
        properties: {
          list: {
            type: 'array',
            maxItems: 4,
            items: {
              type: 'string',
              maxLength: 8,
              'x-kubernetes-validations': [{ rule: 'self == oldSelf' }],
            },
          },
        },
      }),
    );
    expect(texts(causes)).toEqual([
      `${AT}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${AT}.properties[list]`,
    ]);
  });
});

describe('the estimated cost of rules is checked when the CRD is written', () => {
  const tags = (maxItems: number | undefined, maxLength: number): CrdLike =>
    crdWith({
      type: 'object',
      properties: {
        tags: {
          type: 'array',
          ...(maxItems === undefined ? {} : { maxItems }),
          items: { type: 'string', maxLength },
          'x-kubernetes-validations': [{ rule: "self.all(x, x.contains('gpu'))" }],
        },
      },
    });

  // the largest maxItems the real validator accepts for this rule, measured against kube-apiserver
  it.each([
    [16, 909_090],
    [63, 333_333],
    [253, 94_339],
    [1024, 24_154],
  ])('with items of maxLength %i accepts maxItems %i and refuses one more', (maxLength, largest) => {
    expect(compileCrdValidations(tags(largest, maxLength))).toEqual([]);
    // per item: 3 for the loop, 1 for x, ceil(0.1 * 4 * maxLength) for contains; 2 for self and the result
    const cost = 2 + (largest + 1) * (4 + Math.ceil(0.4 * maxLength));
    expect(texts(compileCrdValidations(tags(largest + 1, maxLength)))).toEqual([
      `${AT}.properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of ${(cost / 10_000_000).toFixed(6)}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
  });

  it('refuses an unbounded quadratic rule with the per-rule and the per-CRD messages', () => {
    const crd = crdWith({
      type: 'object',
      properties: {
        names: {
          type: 'array',
          items: { type: 'string' },
          'x-kubernetes-validations': [{ rule: 'self.all(x, self.exists(y, x == y))' }],
        },
      },
    });
    const suffix =
      '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
    expect(texts(compileCrdValidations(crd))).toEqual([
      `${AT}.properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${suffix}`,
      `${AT}.properties[names].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${suffix}`,
    ]);
  });
});

describe('evaluation is bounded at runtime', () => {
  // estimated 9,005,002: accepted; but on 1000 distinct names it spends well over 1,000,000 per call
  const names = crdWith({
    type: 'object',
    properties: {
      names: {
        type: 'array',
        maxItems: 1000,
        items: { type: 'string', maxLength: 8 },
        'x-kubernetes-validations': [{ rule: 'self.all(x, self.exists(y, x == y))' }],
      },
    },
  });
  const distinct = Array.from({ length: 1000 }, (_, i) => `n${i}`);

  it('accepts the CRD, whose estimate is within budget', () => {
    expect(compileCrdValidations(names)).toEqual([]);
  });

  it('stops a rule past the per-call limit with the call-cost message', () => {
    expect(texts(validateCustomResource(names, website({ names: distinct })).causes)).toEqual([
      'spec.names: Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.exists(y, x == y))',
    ]);
    expect(validateCustomResource(names, website({ names: distinct.slice(0, 50) })).causes).toEqual([]);
  });

  it('stops when all rules of the object together run out of the budget', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            items: {
              type: 'array',
              items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0' }] },
            },
          },
        },
      },
    };
    const object = { spec: { items: Array.from({ length: 100 }, (_, i) => i) } };
    expect(validateCustomResourceRules(schema, object, undefined, [], { budget: 1_000_000 }).causes).toEqual(
      [],
    );
    expect(texts(validateCustomResourceRules(schema, object, undefined, [], { budget: 50 }).causes)).toEqual([
      'spec.items[25]: Invalid value: "integer": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });
});

describe('any object against a fixed CRD gives field errors, never an exception', () => {
  const crd = crdWith({
    type: 'object',
    properties: {
      replicas: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self <= 10' }] },
      domain: {
        type: 'string',
        maxLength: 64,
        'x-kubernetes-validations': [{ rule: "self.matches('^[a-z.]+$')" }],
      },
      port: {
        'x-kubernetes-int-or-string': true,
        'x-kubernetes-validations': [{ rule: 'type(self) == int ? self > 0 : self != ""' }],
      },
      ratio: { type: 'number' },
      when: { type: 'string', format: 'date-time' },
      labels: { type: 'object', maxProperties: 4, additionalProperties: { type: 'string', maxLength: 16 } },
      servers: {
        type: 'array',
        maxItems: 5,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', maxLength: 10 }, size: { type: 'integer' } },
          'x-kubernetes-validations': [
            { rule: '!has(self.size) || !has(oldSelf.size) || self.size >= oldSelf.size' },
          ],
        },
      },
    },
    'x-kubernetes-validations': [
      {
        rule: '!has(self.replicas) || !has(self.ratio) || double(self.replicas) * self.ratio < 100.0',
        messageExpression: "'ratio %f too high'.format([self.ratio])",
      },
      { rule: "!has(self.labels) || self.labels.all(k, k.size() < 8 && self.labels[k] != 'x')" },
      { rule: '!has(self.when) || self.when < timestamp("2100-01-01T00:00:00Z")' },
    ],
  });
  const value = fc.oneof(
    fc.constantFrom(
      null,
      0,
      -1,
      11,
      1.5,
      'a.com',
      'BAD',
      '',
      '2024-01-01T00:00:00Z',
      'not-a-date',
      true,
      [],
      {},
    ),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const spec = fc.dictionary(
    fc.constantFrom('replicas', 'domain', 'port', 'ratio', 'when', 'labels', 'servers', 'other'),
    fc.oneof(
      value,
      fc.dictionary(fc.string({ maxLength: 10 }), value, { maxKeys: 5 }),
      fc.array(fc.oneof(value, fc.record({ name: fc.string({ maxLength: 4 }), size: value })), {
        maxLength: 6,
      }),
    ),
  );

  it('returns well-formed causes for random specs, on create and update', () => {
    expect(compileCrdValidations(crd)).toEqual([]);
    fc.assert(
      fc.property(spec, fc.option(spec, { nil: undefined }), (next, previous) => {
        const result = validateCustomResource(
          crd,
          website(next),
          previous === undefined ? {} : { oldObject: website(previous) },
        );
        for (const cause of result.causes) {
          expect(typeof cause.reason).toBe('string');
          expect(typeof cause.message).toBe('string');
          expect(typeof cause.field).toBe('string');
        }
        expect(result.message === undefined).toBe(result.causes.length === 0);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the rules well-behaved even on values of the wrong types, which schema validation would stop', () => {
    const schema = (crd.spec.versions[0]?.schema?.openAPIV3Schema ?? {}) as StructuralSchema;
    fc.assert(
      fc.property(spec, fc.option(spec, { nil: undefined }), (next, previous) => {
        const result = validateCustomResourceRules(
          schema,
          website(next),
          previous === undefined ? undefined : website(previous),
        );
        for (const cause of result.causes) {
          expect(cause.reason).toMatch(/^FieldValue/);
          expect(cause.field).toMatch(/^(<nil>|spec)/);
        }
      }),
      { numRuns: 300 },
    );
  });
});
