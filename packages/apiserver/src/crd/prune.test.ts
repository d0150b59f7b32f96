import { describe, expect, it } from 'vitest';
import { applyDefaults } from './defaults.ts';
import { pruneUnknownFields, strictDecodingMessage, unknownFieldWarnings } from './prune.ts';
import { pipelineSchema, websiteSchema } from './testdata/crds.ts';
import type { StructuralSchema } from './types.ts';

describe('pruneUnknownFields', () => {
  it('drops fields the schema does not declare and reports their paths, sorted', () => {
    const body = {
      apiVersion: 'example.com/v1',
      kind: 'Website',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { domain: 'a.example', zeta: 1, alpha: { deep: true }, env: [{ name: 'A', junk: 1 }] },
      extra: 'x',
    };
    const { object, pruned } = pruneUnknownFields(websiteSchema, body);
    expect(pruned).toEqual(['extra', 'spec.alpha', 'spec.env[0].junk', 'spec.zeta']);
    expect(object).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Website',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { domain: 'a.example', env: [{ name: 'A' }] },
    });
  });

  it('never modifies its input', () => {
    const body = Object.freeze({ spec: Object.freeze({ domain: 'a', extra: 1 }) });
    const { object } = pruneUnknownFields(websiteSchema, body);
    expect(body.spec).toEqual({ domain: 'a', extra: 1 });
    expect(object).not.toBe(body);
  });

  it('keeps apiVersion, kind and metadata at the root but drops unknown ObjectMeta fields, first', () => {
    const { object, pruned } = pruneUnknownFields(
      { type: 'object', properties: { spec: { type: 'object' } } },
      {
        apiVersion: 'v',
        kind: 'K',
        metadata: { name: 'n', color: 'red', ownerReferences: [{ uid: 'u', extra: 1 }] },
        spec: { a: 1 },
      },
    );
    expect(pruned).toEqual(['metadata.color', 'metadata.ownerReferences[0].extra', 'spec.a']);
    expect(object).toEqual({
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n', ownerReferences: [{ uid: 'u' }] },
      spec: {},
    });
  });

  it('keeps everything under x-kubernetes-preserve-unknown-fields except where sub-schemas are declared', () => {
    const body = {
      spec: {
        raw: { anything: [1, { a: null }] },
        steps: [{ name: 's', with: { free: 'form' }, unknown: 1 }],
        template: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', bogus: 1 }, spec: { x: 1 } },
      },
    };
    const { object, pruned } = pruneUnknownFields(pipelineSchema, body);
    expect(pruned).toEqual(['spec.steps[0].unknown', 'spec.template.metadata.bogus']);
    expect(object).toEqual({
      spec: {
        raw: { anything: [1, { a: null }] },
        steps: [{ name: 's', with: { free: 'form' } }],
        template: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { x: 1 } },
      },
    });
  });

  it('drops null for fields that are neither nullable nor defaulted, without reporting them', () => {
    const { object, pruned } = pruneUnknownFields(websiteSchema, {
      spec: { domain: 'a', note: null, image: null, launched: null },
    });
    expect(pruned).toEqual([]);
    expect(object).toEqual({ spec: { domain: 'a', note: null, image: null } });
  });

  it('leaves a valid object unchanged', () => {
    const body = {
      apiVersion: 'example.com/v1',
      kind: 'Website',
      metadata: { name: 'w' },
      spec: { domain: 'a', labels: { x: 'y' } },
      status: { replicas: 1 },
    };
    expect(pruneUnknownFields(websiteSchema, body)).toEqual({ object: body, pruned: [] });
  });
});

describe('applyDefaults', () => {
  it('fills missing fields, recursing into applied defaults, only where the parent exists', () => {
    expect(applyDefaults(websiteSchema, { spec: { domain: 'a' } })).toEqual({
      spec: { domain: 'a', replicas: 1, image: 'nginx:1.27', tier: 'free', tls: { enabled: false } },
    });
    expect(applyDefaults(websiteSchema, { metadata: { name: 'x' } })).toEqual({ metadata: { name: 'x' } });
  });

  it('replaces a non-nullable null with the default but keeps explicit values', () => {
    expect(
      applyDefaults(websiteSchema, {
        spec: { domain: 'a', replicas: null, tier: 'pro', tls: { enabled: true } },
      }),
    ).toEqual({
      spec: { domain: 'a', replicas: 1, image: 'nginx:1.27', tier: 'pro', tls: { enabled: true } },
    });
  });

  it('defaults array items and additionalProperties values from their schemas', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        list: {
          type: 'array',
          items: { type: 'object', properties: { n: { type: 'integer', default: 3 } } },
        },
        map: { type: 'object', additionalProperties: { type: 'string', default: 'd' } },
      },
    };
    expect(applyDefaults(schema, { list: [{}, { n: 1 }], map: { a: null, b: 'x' } })).toEqual({
      list: [{ n: 3 }, { n: 1 }],
      map: { a: 'd', b: 'x' },
    });
  });

  it('applies defaults of nested objects that a default created', () => {
    expect(applyDefaults(pipelineSchema, { spec: {} })).toEqual({
      spec: { options: { timeout: '10m', parallel: true } },
    });
  });

  it('hands out copies of defaults, never the schema value itself', () => {
    const first = applyDefaults(pipelineSchema, { spec: {} }) as {
      spec: { options: Record<string, unknown> };
    };
    first.spec.options.timeout = 'changed';
    expect(applyDefaults(pipelineSchema, { spec: {} })).toEqual({
      spec: { options: { timeout: '10m', parallel: true } },
    });
  });
});

describe('unknown-field reports', () => {
  it('words warnings and the Strict error as kube-apiserver does', () => {
    expect(unknownFieldWarnings(['spec.foo'])).toEqual(['unknown field "spec.foo"']);
    expect(strictDecodingMessage(['spec.a', 'spec.b'])).toBe(
      'strict decoding error: unknown field "spec.a", unknown field "spec.b"',
    );
    expect(strictDecodingMessage([])).toBeUndefined();
  });
});
