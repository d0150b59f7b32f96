import type { StatusCause } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import type { StructuralSchema, ValidationRule } from '../crd/index.ts';
import { type CrdLike, compileCrdValidations, validateCustomResource } from './index.ts';

/** A Website CRD whose `spec` schema is `spec` (plus the rules given for the root). */
function websiteCrd(spec: StructuralSchema, rootRules?: readonly ValidationRule[]): CrdLike {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'websites.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'websites', singular: 'website', kind: 'Website' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec },
              ...(rootRules === undefined ? {} : { 'x-kubernetes-validations': rootRules }),
            },
          },
        },
      ],
    },
  };
}

const website = (spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'w1', namespace: 'default' },
  spec,
});

const texts = (causes: readonly StatusCause[]): string[] => causes.map((c) => `${c.field}: ${c.message}`);

const SPEC: StructuralSchema = {
  type: 'object',
  properties: {
    replicas: {
      type: 'integer',
      'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'must be at most 10' }],
    },
    minReplicas: { type: 'integer' },
    domain: { type: 'string', maxLength: 253 },
    ports: {
      type: 'array',
      maxItems: 16,
      items: { type: 'integer' },
      'x-kubernetes-validations': [{ rule: 'self.size() <= 3', message: 'at most 3 ports' }],
    },
    labels: { type: 'object', maxProperties: 8, additionalProperties: { type: 'string', maxLength: 63 } },
  },
  'x-kubernetes-validations': [
    { rule: 'self.replicas >= self.minReplicas', message: 'replicas below minReplicas' },
  ],
};

describe('rules run with self bound to the value at their node', () => {
  const crd = websiteCrd(SPEC);

  it('accepts an object every rule holds for', () => {
    const result = validateCustomResource(crd, website({ replicas: 3, minReplicas: 1, ports: [80] }));
    expect(result.causes).toEqual([]);
    expect(result.message).toBeUndefined();
  });

  it('reports a scalar, an array and an object rule with their paths and JSON types, all of them', () => {
    const result = validateCustomResource(
      crd,
      website({ replicas: 20, minReplicas: 30, ports: [1, 2, 3, 4] }),
    );
    expect(texts(result.causes)).toEqual([
      'spec: Invalid value: "object": replicas below minReplicas',
      'spec.replicas: Invalid value: "integer": must be at most 10',
      'spec.ports: Invalid value: "array": at most 3 ports',
    ]);
    expect(result.message).toBe(
      'Website.example.com "w1" is invalid: [spec: Invalid value: "object": replicas below minReplicas, ' +
        'spec.replicas: Invalid value: "integer": must be at most 10, spec.ports: Invalid value: "array": at most 3 ports]',
    );
  });

  it('reports a rule at the root under the <nil> field, as kube-apiserver does', () => {
    const rooted = websiteCrd(SPEC, [
      { rule: "self.metadata.name.startsWith('web-')", message: 'name must start with web-' },
    ]);
    expect(validateCustomResource(rooted, website({ replicas: 1, minReplicas: 1 })).message).toBe(
      'Website.example.com "w1" is invalid: <nil>: Invalid value: "object": name must start with web-',
    );
  });

  it('says "failed rule" with the rule when no message is given', () => {
    const plain = websiteCrd({
      type: 'object',
      properties: { n: { type: 'integer', 'x-kubernetes-validations': [{ rule: ' self > 0 ' }] } },
    });
    expect(texts(validateCustomResource(plain, website({ n: 0 })).causes)).toEqual([
      'spec.n: Invalid value: "integer": failed rule: self > 0',
    ]);
  });

  it('applies the schema defaults before the rules see the object', () => {
    const defaulted = websiteCrd({
      type: 'object',
      properties: { replicas: { type: 'integer', default: 1 } },
      'x-kubernetes-validations': [{ rule: 'self.replicas == 1' }],
    });
    const result = validateCustomResource(defaulted, website({}));
    expect(result.causes).toEqual([]);
    expect(result.object).toMatchObject({ spec: { replicas: 1 } });
  });
});

describe('messages, field paths and reasons', () => {
  const rule = (r: ValidationRule): CrdLike =>
    websiteCrd({
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
      'x-kubernetes-validations': [r],
    });

  it('evaluates messageExpression', () => {
    const crd = rule({
      rule: 'self.replicas < 5',
      messageExpression: "'replicas is ' + string(self.replicas) + ', the limit 4'",
    });
    expect(texts(validateCustomResource(crd, website({ replicas: 7 })).causes)).toEqual([
      'spec: Invalid value: "object": replicas is 7, the limit 4',
    ]);
  });

  it('falls back to message when messageExpression fails or yields an empty string', () => {
    const failing = rule({
      rule: 'self.replicas < 5',
      message: 'too many',
      messageExpression: "'label ' + self.labels['x']",
    });
    expect(texts(validateCustomResource(failing, website({ replicas: 7 })).causes)).toEqual([
      'spec: Invalid value: "object": too many',
    ]);
    const empty = rule({ rule: 'self.replicas < 5', messageExpression: "'  '" });
    expect(texts(validateCustomResource(empty, website({ replicas: 7 })).causes)).toEqual([
      'spec: Invalid value: "object": failed rule: self.replicas < 5',
    ]);
  });

  it('reports at fieldPath, relative to the node, with map keys in brackets', () => {
    expect(
      texts(
        validateCustomResource(
          rule({ rule: 'self.replicas < 5', fieldPath: '.replicas' }),
          website({ replicas: 7 }),
        ).causes,
      ),
    ).toEqual(['spec.replicas: Invalid value: "object": failed rule: self.replicas < 5']);
    const keyed = rule({ rule: "self.labels['a.b'] == 'x'", fieldPath: ".labels['a.b']" });
    expect(texts(validateCustomResource(keyed, website({ labels: { 'a.b': 'y' } })).causes)).toEqual([
      `spec.labels[a.b]: Invalid value: "object": failed rule: self.labels['a.b'] == 'x'`,
    ]);
  });

  it.each([
    ['FieldValueForbidden', 'FieldValueForbidden', 'spec: Forbidden: no'],
    ['FieldValueRequired', 'FieldValueRequired', 'spec: Required value: no'],
    ['FieldValueDuplicate', 'FieldValueDuplicate', 'spec: Duplicate value: "object"'],
    ['FieldValueInvalid', 'FieldValueInvalid', 'spec: Invalid value: "object": no'],
  ] as const)('reason %s is the cause type', (reason, type, text) => {
    const causes = validateCustomResource(rule({ rule: 'false', message: 'no', reason }), website({})).causes;
    expect(causes.map((c) => c.reason)).toEqual([type]);
    expect(texts(causes)).toEqual([text]);
  });

  it('reports a runtime error of the rule with the rule', () => {
    const crd = rule({ rule: "self.labels['missing'] == 'x'" });
    expect(texts(validateCustomResource(crd, website({ labels: {} })).causes)).toEqual([
      `spec: Invalid value: "object": no such key: missing evaluating rule: self.labels['missing'] == 'x'`,
    ]);
  });
});

describe('transition rules see oldSelf on updates', () => {
  const crd = websiteCrd({
    type: 'object',
    properties: {
      domain: {
        type: 'string',
        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'domain is immutable' }],
      },
      replicas: {
        type: 'integer',
        'x-kubernetes-validations': [
          { rule: 'oldSelf.hasValue() || self <= 3', message: 'start with at most 3', optionalOldSelf: true },
        ],
      },
      servers: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        maxItems: 10,
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', maxLength: 20 }, size: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.size >= oldSelf.size', message: 'servers only grow' }],
        },
      },
    },
  });

  it('skips them on create, where there is no old value', () => {
    expect(validateCustomResource(crd, website({ domain: 'a.com', replicas: 2 })).causes).toEqual([]);
  });

  it('compares with the old object on update', () => {
    const old = website({ domain: 'a.com', replicas: 2 });
    expect(
      texts(
        validateCustomResource(crd, website({ domain: 'b.com', replicas: 2 }), { oldObject: old }).causes,
      ),
    ).toEqual(['spec.domain: Invalid value: "string": domain is immutable']);
    expect(
      validateCustomResource(crd, website({ domain: 'a.com', replicas: 2 }), { oldObject: old }).causes,
    ).toEqual([]);
  });

  it('runs an optionalOldSelf rule on create with oldSelf empty', () => {
    expect(texts(validateCustomResource(crd, website({ replicas: 5 })).causes)).toEqual([
      'spec.replicas: Invalid value: "integer": start with at most 3',
    ]);
    expect(
      validateCustomResource(crd, website({ replicas: 5 }), { oldObject: website({ replicas: 2 }) }).causes,
    ).toEqual([]);
  });

  it('correlates map-list items by key, so a reordered list compares the same servers', () => {
    const old = website({
      servers: [
        { name: 'a', size: 2 },
        { name: 'b', size: 5 },
      ],
    });
    expect(
      validateCustomResource(
        crd,
        website({
          servers: [
            { name: 'b', size: 6 },
            { name: 'a', size: 2 },
          ],
        }),
        { oldObject: old },
      ).causes,
    ).toEqual([]);
    expect(
      texts(
        validateCustomResource(
          crd,
          website({
            servers: [
              { name: 'b', size: 4 },
              { name: 'c', size: 1 },
            ],
          }),
          { oldObject: old },
        ).causes,
      ),
    ).toEqual(['spec.servers[0]: Invalid value: "object": servers only grow']);
  });

  it('ratchets: a rule failing on a value the update did not change is a warning', () => {
    const strict = websiteCrd({
      type: 'object',
      properties: {
        name: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.startsWith('x')" }] },
        other: { type: 'string' },
      },
    });
    const old = website({ name: 'legacy', other: 'a' });
    const unchanged = validateCustomResource(strict, website({ name: 'legacy', other: 'b' }), {
      oldObject: old,
    });
    expect(unchanged.causes).toEqual([]);
    expect(unchanged.warnings).toEqual([
      'spec.name: Invalid value: "string": failed rule: self.startsWith(\'x\')',
    ]);
    const changed = validateCustomResource(strict, website({ name: 'legacy2', other: 'a' }), {
      oldObject: old,
    });
    expect(texts(changed.causes)).toEqual([
      'spec.name: Invalid value: "string": failed rule: self.startsWith(\'x\')',
    ]);
  });
});

describe('rules are skipped when the object already has a blocking problem', () => {
  it('reports why instead of running them', () => {
    const crd = websiteCrd(SPEC);
    expect(texts(validateCustomResource(crd, website({ replicas: 'many' })).causes)).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});

describe('the CEL types of a schema', () => {
  const crd = websiteCrd({
    type: 'object',
    properties: {
      namespace: { type: 'string' },
      'dash-name': { type: 'string' },
      port: { 'x-kubernetes-int-or-string': true },
      memory: { type: 'string' },
      endpoint: { type: 'string' },
      notBefore: { type: 'string', format: 'date-time' },
      timeout: { type: 'string', format: 'duration' },
      ratio: { type: 'number' },
    },
    'x-kubernetes-validations': [
      { rule: "!has(self.__namespace__) || self.__namespace__ != 'kube-system'", message: 'namespace' },
      { rule: '!has(self.dash__dash__name) || self.dash__dash__name.size() < 5', message: 'dash' },
      {
        rule: "!has(self.port) || (type(self.port) == int ? self.port < 1024 : self.port.endsWith('%'))",
        message: 'port',
      },
      { rule: "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))", message: 'memory' },
      { rule: "!has(self.endpoint) || url(self.endpoint).getScheme() == 'https'", message: 'endpoint' },
      {
        rule: "!has(self.notBefore) || self.notBefore > timestamp('2020-01-01T00:00:00Z')",
        message: 'notBefore',
      },
      { rule: "!has(self.timeout) || self.timeout < duration('1h')", message: 'timeout' },
      { rule: '!has(self.ratio) || self.ratio <= 1.0', message: 'ratio' },
    ],
  });

  it('compiles rules over escaped names, int-or-string, quantities, URLs, timestamps and durations', () => {
    expect(compileCrdValidations(crd)).toEqual([]);
  });

  it.each([
    [
      {
        namespace: 'default',
        'dash-name': 'abc',
        port: 80,
        memory: '512Mi',
        endpoint: 'https://x',
        notBefore: '2024-05-01T00:00:00Z',
        timeout: '30m',
        ratio: 0.5,
      },
      [],
    ],
    [{ namespace: 'kube-system' }, ['namespace']],
    [{ 'dash-name': 'abcdef' }, ['dash']],
    [{ port: 8080 }, ['port']],
    [{ port: '50' }, ['port']],
    [{ port: '50%' }, []],
    [{ memory: '2Gi' }, ['memory']],
    [{ endpoint: 'http://x' }, ['endpoint']],
    [{ notBefore: '2019-05-01T00:00:00Z' }, ['notBefore']],
    [{ timeout: '1h30m' }, ['timeout']],
    [{ ratio: 1.5 }, ['ratio']],
  ])('%j fails %j', (spec, failing) => {
    const messages = validateCustomResource(crd, website(spec)).causes.map((c) =>
      c.message.replace('Invalid value: "object": ', ''),
    );
    expect(messages).toEqual(failing);
  });
});
