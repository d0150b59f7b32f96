import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { patchSchemaFromOpenAPI } from './crd-schema.ts';
import { fieldsV1Of } from './fields-v1-of.ts';
import { asList, memberSchema, type PatchSchema } from './schema.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';

function at(schema: PatchSchema | undefined, ...path: string[]): PatchSchema | undefined {
  let node = schema;
  for (const step of path) node = step === '[]' ? asList(node)?.items : memberSchema(node, step);
  return node;
}

const SERVED = [
  ['', 'Namespace'],
  ['', 'ConfigMap'],
  ['', 'Secret'],
  ['', 'ServiceAccount'],
  ['', 'Service'],
  ['', 'Pod'],
  ['', 'Event'],
  ['apps', 'Deployment'],
  ['apps', 'ReplicaSet'],
  ['apps', 'StatefulSet'],
  ['batch', 'Job'],
  ['events.k8s.io', 'Event'],
  ['coordination.k8s.io', 'Lease'],
  ['apiextensions.k8s.io', 'CustomResourceDefinition'],
  ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration'],
  ['admissionregistration.k8s.io', 'ValidatingWebhookConfiguration'],
] as const;

describe('patchSchemaFor', () => {
  it.each(SERVED)(
    'describes %s %s with ObjectMeta: finalizers a set, ownerReferences keyed by uid',
    (group, kind) => {
      const schema = patchSchemaFor(group, 'v1', kind);
      expect(at(schema, 'metadata', 'finalizers')).toMatchObject({ patchStrategy: 'merge', listType: 'set' });
      expect(at(schema, 'metadata', 'ownerReferences')).toMatchObject({
        patchMergeKey: 'uid',
        listMapKeys: ['uid'],
      });
      expect(at(schema, 'metadata', 'labels')).toEqual({ type: 'map' });
    },
  );

  it('is undefined for custom resources and for versions we do not serve', () => {
    expect(patchSchemaFor('example.com', 'v1', 'Widget')).toBeUndefined();
    expect(patchSchemaFor('apps', 'v1beta1', 'Deployment')).toBeUndefined();
    expect(patchSchemaFor('', 'v1', 'Deployment')).toBeUndefined();
  });

  it.each([
    ['Pod', ['spec', 'containers'], 'name', ['name']],
    ['Pod', ['spec', 'initContainers'], 'name', ['name']],
    ['Pod', ['spec', 'volumes'], 'name', ['name']],
    ['Pod', ['spec', 'imagePullSecrets'], 'name', ['name']],
    ['Pod', ['spec', 'containers', '[]', 'env'], 'name', ['name']],
    ['Pod', ['spec', 'containers', '[]', 'ports'], 'containerPort', ['containerPort', 'protocol']],
    ['Pod', ['spec', 'containers', '[]', 'volumeMounts'], 'mountPath', ['mountPath']],
    ['Deployment', ['spec', 'template', 'spec', 'containers'], 'name', ['name']],
    ['StatefulSet', ['spec', 'template', 'spec', 'initContainers'], 'name', ['name']],
    ['Service', ['spec', 'ports'], 'port', ['port', 'protocol']],
  ])('%s %j merges by %s and applies by %j', (kind, path, mergeKey, keys) => {
    const group = kind === 'Pod' || kind === 'Service' ? '' : 'apps';
    expect(at(patchSchemaFor(group, 'v1', kind), ...path)).toMatchObject({
      patchStrategy: 'merge',
      patchMergeKey: mergeKey,
      listType: 'map',
      listMapKeys: keys,
    });
  });

  it('tolerations, command and args are replaced by SMP and atomic for apply', () => {
    const pod = patchSchemaFor('', 'v1', 'Pod');
    expect(at(pod, 'spec', 'tolerations')).toBeUndefined();
    const original = { spec: { tolerations: [{ key: 'a' }], containers: [{ name: 'c', args: ['1', '2'] }] } };
    const patch = { spec: { tolerations: [{ key: 'b' }], containers: [{ name: 'c', args: ['3'] }] } };
    expect(applyStrategicMergePatch(original, patch, pod as PatchSchema)).toEqual(patch);
    expect(fieldsV1Of(patch, pod)).toEqual({
      'f:spec': {
        'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:args': {}, 'f:name': {} } },
        'f:tolerations': {},
      },
    });
  });

  it('a Deployment selector is atomic for apply', () => {
    const deployment = patchSchemaFor('apps', 'v1', 'Deployment');
    expect(fieldsV1Of({ spec: { selector: { matchLabels: { app: 'web' } } } }, deployment)).toEqual({
      'f:spec': { 'f:selector': {} },
    });
  });
});

describe('patchSchemaFromOpenAPI', () => {
  const crd = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port', 'protocol'],
            items: {
              type: 'object',
              properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
            },
          },
          tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          args: { type: 'array', items: { type: 'string' } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          ref: {
            type: 'object',
            'x-kubernetes-map-type': 'atomic',
            properties: { name: { type: 'string' } },
          },
        },
      },
    },
  };

  it('turns list types, map keys and their defaults, maps and atomic objects into patch metadata', () => {
    const schema = patchSchemaFromOpenAPI(crd);
    const widget = {
      metadata: { name: 'w', finalizers: ['f'] },
      spec: { ports: [{ port: 80 }], tags: ['a'], args: ['x'], labels: { k: 'v' }, ref: { name: 'r' } },
    };
    expect(fieldsV1Of(widget, schema)).toEqual({
      'f:metadata': { 'f:finalizers': { 'v:"f"': {} } },
      'f:spec': {
        'f:args': {},
        'f:labels': { 'f:k': {} },
        'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } },
        'f:ref': {},
        'f:tags': { 'v:"a"': {} },
      },
    });
  });

  it('carries no strategic merge patch metadata', () => {
    expect(at(patchSchemaFromOpenAPI(crd), 'spec', 'ports')).not.toHaveProperty('patchMergeKey');
  });

  it('accepts a schema without properties', () => {
    expect(
      patchSchemaFromOpenAPI({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
    ).toMatchObject({
      type: 'struct',
      fields: { metadata: expect.any(Object) },
    });
  });
});
