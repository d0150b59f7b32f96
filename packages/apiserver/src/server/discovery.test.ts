import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const KUBECTL_ACCEPT = `${V2},${V2BETA1},application/json`;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

interface AggregatedList {
  kind: string;
  apiVersion: string;
  items: {
    metadata: { name?: string };
    versions: {
      version: string;
      resources: {
        resource: string;
        scope: string;
        shortNames?: string[];
        categories?: string[];
        subresources?: {
          subresource: string;
          responseKind: { group: string; version: string; kind: string };
        }[];
      }[];
    }[];
  }[];
}

describe('version and health', () => {
  it('reports Kubernetes 1.32 so the kubectl dispatcher runs kubectl 1.32', async () => {
    const res = await t.request('/version?timeout=5s');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ major: '1', minor: '32' });
    expect((res.json as { gitVersion: string }).gitVersion).toMatch(/^v1\.32\.\d+/);
  });

  it('answers health checks with ok', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await t.request(path);
      expect([res.status, res.text]).toEqual([200, 'ok']);
    }
  });
});

describe('legacy discovery', () => {
  it('serves /api as APIVersions with v1 and /apis as an APIGroupList without the core group', async () => {
    const api = await t.request('/api', { headers: { accept: 'application/json' } });
    expect(api.headers['content-type']).toBe('application/json');
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = (await t.request('/apis')).json as {
      kind: string;
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    };
    expect(apis.kind).toBe('APIGroupList');
    const names = apis.groups.map((g) => g.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'apps',
        'batch',
        'coordination.k8s.io',
        'events.k8s.io',
        'apiextensions.k8s.io',
        'admissionregistration.k8s.io',
      ]),
    );
    expect(names).not.toContain('');
    expect(apis.groups.find((g) => g.name === 'apps')?.preferredVersion.groupVersion).toBe('apps/v1');
  });

  it('lists main resources before subresources, with the scale subresource as autoscaling/v1 Scale', async () => {
    const list = (await t.request('/apis/apps/v1')).json as {
      groupVersion: string;
      resources: Record<string, unknown>[];
    };
    expect(list.groupVersion).toBe('apps/v1');
    const names = list.resources.map((r) => r.name as string);
    const firstSub = names.findIndex((n) => n.includes('/'));
    expect(names.slice(firstSub).every((n) => n.includes('/'))).toBe(true);
    expect(list.resources.find((r) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
    expect(list.resources.find((r) => r.name === 'deployments')).toMatchObject({
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
    });
  });

  it('serves /api/v1 with short names and verbs of the core kinds', async () => {
    const list = (await t.request('/api/v1')).json as {
      resources: { name: string; shortNames?: string[]; verbs: string[]; namespaced: boolean }[];
    };
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    expect(byName.get('configmaps')?.shortNames).toEqual(['cm']);
    expect(byName.get('namespaces')).toMatchObject({ namespaced: false, shortNames: ['ns'] });
    expect(byName.get('pods')?.verbs).toEqual(
      expect.arrayContaining([
        'create',
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]),
    );
    expect(byName.has('namespaces/status')).toBe(true);
  });

  it('serves /apis/{group} as an APIGroup and 404s unknown groups and versions', async () => {
    expect((await t.request('/apis/apps')).json).toMatchObject({ kind: 'APIGroup', name: 'apps' });
    expect((await t.request('/apis/nope.example.com')).status).toBe(404);
    expect((await t.request('/apis/apps/v2')).status).toBe(404);
  });
});

describe('aggregated discovery', () => {
  it('answers kubectl 1.32 with apidiscovery v2 and the exact Content-Type', async () => {
    const res = await t.request('/apis', { headers: { accept: KUBECTL_ACCEPT } });
    expect(res.headers['content-type']).toBe(V2);
    const list = res.json as AggregatedList;
    expect(list).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    const apps = list.items.find((g) => g.metadata.name === 'apps');
    const deployments = apps?.versions[0]?.resources.find((r) => r.resource === 'deployments');
    expect(deployments).toMatchObject({ scope: 'Namespaced', shortNames: ['deploy'], categories: ['all'] });
    expect(deployments?.subresources?.find((s) => s.subresource === 'scale')?.responseKind).toEqual({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
  });

  it('answers kubectl 1.27 (v2beta1 only) with v2beta1 and the core group on /api', async () => {
    const res = await t.request('/api', { headers: { accept: `${V2BETA1},application/json` } });
    expect(res.headers['content-type']).toBe(V2BETA1);
    const list = res.json as AggregatedList;
    expect(list.apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    expect(list.items).toHaveLength(1);
    expect(list.items[0]?.metadata.name).toBeUndefined();
    expect(list.items[0]?.versions[0]?.resources.map((r) => r.resource)).toContain('configmaps');
  });

  it('ignores parameter order in the Accept header', async () => {
    const res = await t.request('/apis', {
      headers: { accept: 'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io' },
    });
    expect(res.headers['content-type']).toBe(V2);
  });
});

describe('OpenAPI v3', () => {
  it('lists every group-version with a hash, and the document has PATCH operations kubectl accepts', async () => {
    const index = (await t.request('/openapi/v3')).json as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const core = index.paths['api/v1']?.serverRelativeURL ?? '';
    expect(core).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    expect(index.paths['apis/apps/v1']).toBeDefined();
    const doc = await t.request(core);
    expect(doc.headers['cache-control']).toBe('public, immutable');
    const paths = (
      doc.json as {
        paths: Record<
          string,
          { patch?: { 'x-kubernetes-group-version-kind': unknown; parameters: { name: string }[] } }
        >;
      }
    ).paths;
    const patch = paths['/api/v1/namespaces/{namespace}/configmaps/{name}']?.patch;
    expect(patch?.['x-kubernetes-group-version-kind']).toEqual({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
    });
    expect(patch?.parameters.map((p) => p.name)).toContain('fieldValidation');
    expect(paths['/api/v1/namespaces/{name}']?.patch?.['x-kubernetes-group-version-kind']).toEqual({
      group: '',
      version: 'v1',
      kind: 'Namespace',
    });
  });

  it('redirects a stale hash to the current document', async () => {
    const res = await t.request('/openapi/v3/api/v1?hash=STALE');
    expect(res.status).toBe(301);
    expect(res.headers.location).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
  });

  it('carries a schema per kind with its group-version-kind for kubectl explain', async () => {
    const doc = (await t.request('/openapi/v3/apis/apps/v1')).json as {
      components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown[] }> };
    };
    const deployment = doc.components.schemas['io.k8s.api.apps.v1.Deployment'];
    expect(deployment?.['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', version: 'v1', kind: 'Deployment' },
    ]);
  });

  it('answers /openapi/v2 with the built-in definitions in JSON, and in gnostic protobuf for kubectl', async () => {
    const v2 = await t.request('/openapi/v2');
    expect(v2.status).toBe(200);
    const doc = v2.json as { swagger: string; definitions: Record<string, unknown> };
    expect(doc.swagger).toBe('2.0');
    expect(doc.definitions['io.k8s.api.core.v1.ConfigMap']).toMatchObject({
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'ConfigMap' }],
    });
    const proto = await t.request('/openapi/v2', {
      headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    });
    expect(proto.status).toBe(200);
    expect(proto.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const yaml = await t.request('/openapi/v2', { headers: { accept: 'application/yaml' } });
    expect(yaml.status).toBe(406);
  });
});
