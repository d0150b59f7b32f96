import { describe, expect, it } from 'vitest';
import { CrdNotJsonError, CrdSchemaError } from './errors.ts';
import { causeText, invalidError } from './field-errors.ts';
import { pipelineSchema, websiteSchema } from './testdata/crds.ts';
import type { StructuralSchema } from './types.ts';
import { validateCustomResource, validateCustomResourceStatus } from './validate-object.ts';

const website = (
  spec: Record<string, unknown>,
  status?: Record<string, unknown>,
): Record<string, unknown> => ({
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'w1', namespace: 'default' },
  spec: { domain: 'example.com', ...spec },
  ...(status === undefined ? {} : { status }),
});
const texts = (schema: StructuralSchema, object: unknown): string[] =>
  validateCustomResource(schema, object).map(causeText);
const spec = (props: Record<string, StructuralSchema>, required?: string[]): StructuralSchema => ({
  type: 'object',
  properties: {
    spec: { type: 'object', properties: props, ...(required === undefined ? {} : { required }) },
  },
});

describe('validateCustomResource reports types as kube-apiserver prints them', () => {
  it('accepts a valid Website', () => {
    expect(
      validateCustomResource(
        websiteSchema,
        website({ replicas: 3, port: 'http', tls: { enabled: true }, weight: 1.5 }),
      ),
    ).toEqual([]);
  });

  it('reports a string where an integer belongs with the type as the value', () => {
    expect(validateCustomResource(websiteSchema, website({ replicas: 'three' }))).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        field: 'spec.replicas',
      },
    ]);
  });

  it('reports a missing required field as a bare Required value', () => {
    expect(validateCustomResource(websiteSchema, { spec: {} })).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.domain' },
    ]);
  });

  it('refuses null unless the field is nullable', () => {
    expect(texts(websiteSchema, website({ image: null, note: null }))).toEqual([
      'spec.image: Invalid value: "null": spec.image in body must be of type string: "null"',
    ]);
  });

  it('treats a fraction as a number, not an integer, and reports the range check too', () => {
    expect(texts(spec({ n: { type: 'integer' } }), { spec: { n: 1.5 } })).toEqual([
      'spec.n: Invalid value: "number": spec.n in body must be of type integer: "number"',
      '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.n',
    ]);
  });

  it("enforces int32 ranges with kube's unattributed message", () => {
    expect(texts(websiteSchema, website({ replicas: 2 ** 31 }))).toEqual([
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.replicas',
      'spec.replicas: Invalid value: 2147483648: spec.replicas in body should be less than or equal to 10',
    ]);
  });

  it('accepts integer or string for int-or-string and explains a boolean three ways, as kube does', () => {
    expect(texts(websiteSchema, website({ port: 8080 }))).toEqual([]);
    expect(texts(websiteSchema, website({ port: true }))).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
    ]);
  });
});

describe('validateCustomResource reports value constraints', () => {
  it('checks minimum, maximum and exclusive bounds', () => {
    const schema = spec({
      a: { type: 'integer', minimum: 1, maximum: 10 },
      b: { type: 'number', minimum: 0, exclusiveMinimum: true },
      c: { type: 'integer', maximum: 5, exclusiveMaximum: true },
    });
    expect(texts(schema, { spec: { a: 11, b: 0, c: 5 } })).toEqual([
      'spec.a: Invalid value: 11: spec.a in body should be less than or equal to 10',
      'spec.b: Invalid value: 0: spec.b in body should be greater than 0',
      'spec.c: Invalid value: 5: spec.c in body should be less than 5',
    ]);
    expect(texts(schema, { spec: { a: 0 } })).toEqual([
      'spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1',
    ]);
  });

  it('truncates a fractional multipleOf for integral values, as kube-openapi does', () => {
    expect(texts(websiteSchema, website({ weight: 2 }))).toEqual([
      'spec.weight: Invalid value: 0: factor MultipleOf declared for spec.weight must be positive: 0',
    ]);
  });

  it('prints float bounds in Go notation', () => {
    expect(texts(spec({ x: { type: 'number', maximum: 1e6 } }), { spec: { x: 1.5e6 + 0.5 } })).toEqual([
      'spec.x: Invalid value: 1.5000005e+06: spec.x in body should be less than or equal to 1e+06',
    ]);
  });

  it('checks multipleOf', () => {
    expect(texts(websiteSchema, website({ weight: 0.7 }))).toEqual([
      'spec.weight: Invalid value: 0.7: spec.weight in body should be a multiple of 0.5',
    ]);
  });

  it('checks maxLength as Too long and minLength and pattern as Invalid value', () => {
    expect(
      texts(
        spec({
          a: { type: 'string', maxLength: 3 },
          b: { type: 'string', minLength: 2 },
          c: { type: 'string', pattern: '^[a-z]+$' },
        }),
        { spec: { a: 'abcd', b: 'x', c: 'A1' } },
      ),
    ).toEqual([
      'spec.a: Too long: may not be more than 3 bytes',
      'spec.b: Invalid value: "x": spec.b in body should be at least 2 chars long',
      'spec.c: Invalid value: "A1": spec.c in body should match \'^[a-z]+$\'',
    ]);
  });

  it('counts characters, not bytes, for string lengths', () => {
    expect(texts(spec({ a: { type: 'string', maxLength: 2 } }), { spec: { a: 'éé' } })).toEqual([]);
  });

  it('lists the supported values of an enum', () => {
    expect(validateCustomResource(websiteSchema, website({ tier: 'gold' }))).toEqual([
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "gold": supported values: "free", "pro", "enterprise"',
        field: 'spec.tier',
      },
    ]);
  });

  it('validates formats: date-time, hostname, int32', () => {
    expect(texts(websiteSchema, website({ domain: 'not a host', launched: 'yesterday' }))).toEqual([
      'spec.domain: Invalid value: "not a host": spec.domain in body must be of type hostname: "not a host"',
      'spec.launched: Invalid value: "yesterday": spec.launched in body must be of type date-time: "yesterday"',
    ]);
    expect(texts(websiteSchema, website({ launched: '2026-03-01T12:00:00Z' }))).toEqual([]);
  });

  it('ignores formats kube does not support', () => {
    expect(texts(spec({ a: { type: 'string', format: 'color' } }), { spec: { a: 'anything' } })).toEqual([]);
  });

  it('checks item counts and property counts', () => {
    expect(
      texts(
        websiteSchema,
        website({ paths: ['/a', '/b', '/c', '/d', '/e'], labels: { a: '1', b: '2', c: '3', d: '4' } }),
      ),
    ).toEqual([
      'spec.paths: Too many: 5: must have at most 4 items',
      'spec.labels: Too many: 4: must have at most 3 items',
    ]);
    expect(
      texts(
        spec({
          l: { type: 'array', minItems: 1, items: { type: 'string' } },
          m: { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } },
        }),
        { spec: { l: [], m: {} } },
      ),
    ).toEqual([
      'spec.l: Invalid value: 0: spec.l in body should have at least 1 items',
      'spec.m: Invalid value: 0: spec.m in body should have at least 1 properties',
    ]);
  });

  it('validates the values of additionalProperties and array items with their paths', () => {
    expect(texts(websiteSchema, website({ labels: { a: 5 }, env: [{ name: 'A', value: 1 }] }))).toEqual([
      'spec.env[0].value: Invalid value: "integer": spec.env[0].value in body must be of type string: "integer"',
      'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
    ]);
  });
});

describe('validateCustomResource enforces list types and embedded resources', () => {
  it('reports the second occurrence of a duplicate in a set and of a key in a map list', () => {
    expect(
      texts(
        websiteSchema,
        website({ paths: ['/', '/', '/'], env: [{ name: 'A' }, { name: 'B' }, { name: 'A' }] }),
      ),
    ).toEqual([
      'spec.paths[1]: Duplicate value: "/"',
      'spec.env[2]: Duplicate value: map[string]interface {}{"name":"A"}',
    ]);
  });

  it('requires apiVersion and kind of an embedded resource and checks its metadata', () => {
    const object = { spec: { template: { metadata: { name: 'a/b', labels: { 'bad key!': 'x' } } } } };
    expect(texts(pipelineSchema, object)).toEqual([
      'spec.template.apiVersion: Required value',
      'spec.template.kind: Required value',
      'spec.template.metadata.name: Invalid value: "a/b": may not contain \'/\'',
      expect.stringMatching(
        /^spec\.template\.metadata\.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters/,
      ),
    ]);
  });

  it('accepts a complete embedded resource', () => {
    const object = {
      spec: {
        template: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { anything: true } },
      },
    };
    expect(texts(pipelineSchema, object)).toEqual([]);
  });
});

describe('validateCustomResourceStatus', () => {
  it('validates only .status, with paths under status and messages relative to it', () => {
    const object = website(
      { replicas: 'bad' },
      { replicas: 'two', conditions: [{ type: 'Ready', status: 'Maybe' }] },
    );
    expect(validateCustomResourceStatus(websiteSchema, object).map(causeText)).toEqual([
      'status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"',
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
    ]);
  });
});

describe('invalidError', () => {
  it('builds the 422 kube answers, joining several causes in brackets', () => {
    const causes = validateCustomResource(websiteSchema, website({ replicas: 'x', tier: 'gold' }));
    const error = invalidError({ group: 'example.com', kind: 'Website' }, 'w1', causes);
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'Website.example.com "w1" is invalid: [spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", spec.tier: Unsupported value: "gold": supported values: "free", "pro", "enterprise"]',
    );
    expect(error.details).toEqual({ name: 'w1', group: 'example.com', kind: 'Website', causes });
  });
});

describe('validateCustomResource refuses malformed input with typed errors', () => {
  it('throws CrdSchemaError for a schema with a wrongly typed keyword', () => {
    expect(() =>
      validateCustomResource({ type: 'object', properties: { a: { type: 5 } } } as never, {}),
    ).toThrow(CrdSchemaError);
  });

  it('throws CrdNotJsonError for values JSON cannot carry', () => {
    expect(() => validateCustomResource(websiteSchema, { spec: { replicas: Number.NaN } })).toThrow(
      CrdNotJsonError,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => validateCustomResource(websiteSchema, cyclic)).toThrow(
      'self: a cyclic reference is not a JSON value',
    );
  });
});

describe('validateCustomResource on deeply nested input', () => {
  it('refuses nesting beyond 512 levels with a typed error instead of overflowing the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => validateCustomResource(websiteSchema, { spec: { raw: deep } })).toThrow(CrdNotJsonError);
  });
});
