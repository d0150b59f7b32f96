import { describe, expect, it } from 'vitest';
import { CrdVersionNotFoundError } from './errors.ts';
import { openApiV3ForCrd, openApiV3ForGroupVersion } from './openapi.ts';
import { databaseCrd, pipelineCrd, variant, websiteCrd } from './testdata/crds.ts';

interface Doc {
  paths: Record<
    string,
    Record<
      string,
      { operationId?: string; parameters?: { name: string; in: string }[]; [k: string]: unknown }
    >
  >;
  components: { schemas: Record<string, Record<string, unknown>> };
}
const doc = (value: unknown): Doc => value as Doc;
const NS = '/apis/example.com/v1/namespaces/{namespace}/websites';

describe('openApiV3ForCrd', () => {
  it('gives every PATCH the GVK extension and a fieldValidation query parameter, as kubectl apply checks', () => {
    const d = doc(openApiV3ForCrd(websiteCrd));
    const patches = Object.entries(d.paths).filter(([, item]) => item.patch !== undefined);
    expect(patches.map(([path]) => path)).toEqual([
      `${NS}/{name}`,
      `${NS}/{name}/status`,
      `${NS}/{name}/scale`,
    ]);
    for (const [, item] of patches) {
      expect(item.patch?.['x-kubernetes-group-version-kind']).toEqual({
        group: 'example.com',
        kind: 'Website',
        version: 'v1',
      });
      expect(item.patch?.parameters).toContainEqual(
        expect.objectContaining({ name: 'fieldValidation', in: 'query' }),
      );
      const body = item.patch?.requestBody as { content: object };
      expect(Object.keys(body.content)).toEqual([
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ]);
    }
  });

  it('names operations and tags as kube does', () => {
    const d = doc(openApiV3ForCrd(websiteCrd));
    expect(d.paths['/apis/example.com/v1/websites']?.get?.operationId).toBe(
      'listExampleComV1WebsiteForAllNamespaces',
    );
    expect(d.paths[NS]?.post?.operationId).toBe('createExampleComV1NamespacedWebsite');
    expect(d.paths[`${NS}/{name}/scale`]?.patch?.operationId).toBe('patchExampleComV1NamespacedWebsiteScale');
    expect(d.paths[`${NS}/{name}`]?.get?.tags).toEqual(['exampleCom_v1']);
    expect(d.paths[`${NS}/{name}`]?.patch?.description).toBe('partially update the specified Website');
    const shared = d.paths[`${NS}/{name}`]?.parameters as unknown as { name: string }[];
    expect(shared.map((p) => p.name)).toEqual(['name', 'namespace', 'pretty']);
  });

  it('publishes the kind schema with its GVK, metadata as ObjectMeta and the selectable fields', () => {
    const schemas = doc(openApiV3ForCrd(websiteCrd)).components.schemas;
    const kind = schemas['com.example.v1.Website'] as {
      properties: Record<string, Record<string, unknown>>;
      [k: string]: unknown;
    };
    expect(kind['x-kubernetes-group-version-kind']).toEqual([
      { group: 'example.com', kind: 'Website', version: 'v1' },
    ]);
    expect(kind['x-kubernetes-selectable-fields']).toEqual([{ fieldPath: 'spec.tier' }]);
    expect(kind.properties.metadata?.allOf).toEqual([
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    ]);
    expect(kind.properties.spec).toMatchObject({
      required: ['domain'],
      properties: { replicas: { type: 'integer', format: 'int32', default: 1 } },
    });
    expect(schemas['com.example.v1.WebsiteList']?.['x-kubernetes-group-version-kind']).toEqual([
      { group: 'example.com', kind: 'WebsiteList', version: 'v1' },
    ]);
    for (const name of [
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
      'io.k8s.api.autoscaling.v1.Scale',
    ]) {
      expect(schemas[name]).toBeDefined();
    }
  });

  it('adds TypeMeta and ObjectMeta to embedded resources', () => {
    const schemas = doc(openApiV3ForCrd(pipelineCrd)).components.schemas;
    const spec = (
      schemas['com.example.ci.v1alpha1.Pipeline'] as {
        properties: { spec: { properties: { template: Record<string, unknown> } } };
      }
    ).properties.spec;
    expect(spec.properties.template.required).toEqual(['kind', 'apiVersion']);
    expect(Object.keys(spec.properties.template.properties as object)).toEqual([
      'apiVersion',
      'kind',
      'metadata',
    ]);
  });

  it('serves cluster-scoped paths without a namespace and throws for unknown versions', () => {
    const paths = Object.keys(doc(openApiV3ForCrd(databaseCrd, 'v1beta1')).paths);
    expect(paths).toEqual([
      '/apis/data.example.org/v1beta1/databases',
      '/apis/data.example.org/v1beta1/databases/{name}',
    ]);
    expect(() => openApiV3ForCrd(databaseCrd, 'v9')).toThrow(CrdVersionNotFoundError);
  });
});

describe('openApiV3ForGroupVersion', () => {
  it('merges every CRD served at the group version', () => {
    const gadget = variant(websiteCrd, (d) => {
      d.metadata.name = 'gadgets.example.com';
      d.spec.names = { plural: 'gadgets', kind: 'Gadget' };
    });
    const schemas = Object.keys(
      doc(openApiV3ForGroupVersion([websiteCrd, gadget, databaseCrd], 'example.com', 'v1')).components
        .schemas,
    );
    expect(schemas).toEqual(
      expect.arrayContaining([
        'com.example.v1.Website',
        'com.example.v1.Gadget',
        'com.example.v1.GadgetList',
      ]),
    );
    expect(schemas.some((s) => s.includes('Database'))).toBe(false);
  });
});
