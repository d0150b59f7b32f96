import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

function widgetCrd(name = 'widgets.example.com', extra: Record<string, unknown> = {}): Obj {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.selector',
            },
          },
        },
        { name: 'v1beta1', served: true, storage: false, schema },
      ],
      ...extra,
    },
  };
}

beforeAll(async () => {
  t = await startTestServer();
  const res = await t.request(CRDS, { method: 'POST', body: widgetCrd() });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t.close();
});

describe('CustomResourceDefinitions', () => {
  it('establishes a CRD at once: accepted names, NamesAccepted and Established True, stored versions', async () => {
    const crd = (await t.request(`${CRDS}/widgets.example.com`)).json as Obj;
    const conditions = (crd.status?.conditions ?? []) as { type: string; status: string }[];
    expect(conditions.find((c) => c.type === 'NamesAccepted')?.status).toBe('True');
    expect(conditions.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(crd.status).toMatchObject({
      acceptedNames: { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' },
      storedVersions: ['v1'],
    });
    expect(crd.spec).toMatchObject({
      names: { singular: 'widget', listKind: 'WidgetList' },
      conversion: { strategy: 'None' },
    });
  });

  it('publishes the CRD in aggregated and legacy discovery and in OpenAPI v3', async () => {
    const agg = (await t.request('/apis', { headers: { accept: V2 } })).json as {
      items: {
        metadata: { name: string };
        versions: {
          version: string;
          resources: { resource: string; shortNames?: string[]; subresources?: { subresource: string }[] }[];
        }[];
      }[];
    };
    const group = agg.items.find((g) => g.metadata.name === 'example.com');
    expect(group?.versions.map((v) => v.version)).toEqual(['v1', 'v1beta1']);
    const widgets = group?.versions[0]?.resources[0];
    expect(widgets).toMatchObject({ resource: 'widgets', shortNames: ['wd'] });
    expect(widgets?.subresources?.map((s) => s.subresource).sort()).toEqual(['scale', 'status']);
    const legacy = (await t.request('/apis/example.com/v1')).json as { resources: { name: string }[] };
    expect(legacy.resources.map((r) => r.name)).toEqual(['widgets', 'widgets/scale', 'widgets/status']);
    const index = (await t.request('/openapi/v3')).json as { paths: Record<string, unknown> };
    expect(index.paths['apis/example.com/v1']).toBeDefined();
    const doc = (await t.request('/openapi/v3/apis/example.com/v1')).json as {
      paths: Record<string, { patch?: { parameters: { name: string }[] } }>;
    };
    expect(
      doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']?.patch?.parameters.map(
        (p) => p.name,
      ),
    ).toContain('fieldValidation');
  });

  it('serves custom resources with generation, and requires a resourceVersion on PUT (422)', async () => {
    const res = await t.request(WIDGETS, {
      method: 'POST',
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { size: 1, replicas: 1 },
        status: { ignored: true },
      },
    });
    expect(res.status).toBe(201);
    const w = res.json as Obj;
    expect(w.metadata.generation).toBe(1);
    expect(w.status).toBeUndefined();
    const noRv = await t.request(`${WIDGETS}/w1`, {
      method: 'PUT',
      body: { ...w, metadata: { name: 'w1' } },
    });
    expect(noRv.status).toBe(422);
    expect(noRv.json).toMatchObject({
      reason: 'Invalid',
      message: expect.stringContaining('metadata.resourceVersion'),
    });
    const put = await t.request(`${WIDGETS}/w1`, {
      method: 'PUT',
      body: { ...w, spec: { size: 2, replicas: 1 } },
    });
    expect((put.json as Obj).metadata.generation).toBe(2);
  });

  it('answers a strategic merge patch on a custom resource with the upstream 415', async () => {
    const res = await t.request(`${WIDGETS}/w1`, {
      method: 'PATCH',
      body: { spec: { size: 3 } },
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    });
    expect(res.status).toBe(415);
    expect(res.json).toMatchObject({
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
  });

  it('serves the status subresource: only status changes, without a generation bump', async () => {
    const res = await t.request(`${WIDGETS}/w1/status`, {
      method: 'PATCH',
      body: { status: { replicas: 1, selector: 'app=w' }, spec: { size: 99 } },
      headers: MERGE,
    });
    expect(res.status).toBe(200);
    const w = res.json as Obj;
    expect(w.status).toEqual({ replicas: 1, selector: 'app=w' });
    expect(w.spec).toMatchObject({ size: 2 });
    expect(w.metadata.generation).toBe(2);
  });

  it('serves the scale subresource from the declared paths', async () => {
    const scale = (await t.request(`${WIDGETS}/w1/scale`)).json as Obj;
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 1, selector: 'app=w' },
    });
    const res = await t.request(`${WIDGETS}/w1/scale`, {
      method: 'PATCH',
      body: { spec: { replicas: 3 } },
      headers: MERGE,
    });
    expect(res.json).toMatchObject({ spec: { replicas: 3 } });
    expect(((await t.request(`${WIDGETS}/w1`)).json as Obj).spec).toMatchObject({ replicas: 3 });
  });

  it('serves other versions of the same objects, rewriting only apiVersion', async () => {
    const beta = await t.request('/apis/example.com/v1beta1/namespaces/default/widgets', {
      method: 'POST',
      body: {
        apiVersion: 'example.com/v1beta1',
        kind: 'Widget',
        metadata: { name: 'b1' },
        spec: { size: 5 },
      },
    });
    expect(beta.status).toBe(201);
    expect((beta.json as Obj).apiVersion).toBe('example.com/v1beta1');
    const v1 = (await t.request(`${WIDGETS}/b1`)).json as Obj;
    expect(v1).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 5 } });
    const list = (await t.request('/apis/example.com/v1beta1/namespaces/default/widgets')).json as {
      kind: string;
      items: Obj[];
    };
    expect(list.kind).toBe('WidgetList');
    expect(list.items.every((i) => i.apiVersion === 'example.com/v1beta1')).toBe(true);
  });

  it('explains unknown field selectors as kube-apiserver does for custom resources', async () => {
    const res = await t.request(`${WIDGETS}?fieldSelector=spec.size%3D1`);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      message: '"spec.size" is not a known field selector: only "metadata.name", "metadata.namespace"',
    });
  });

  it('validates CRDs (422 for a name that is not plural.group)', async () => {
    const res = await t.request(CRDS, { method: 'POST', body: widgetCrd('wrong.example.com') });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      reason: 'Invalid',
      details: {
        kind: 'CustomResourceDefinition',
        group: 'apiextensions.k8s.io',
        causes: [{ field: 'metadata.name' }],
      },
    });
  });

  it('does not accept names that clash with a built-in resource, and its deletion leaves the built-in alone', async () => {
    const clash: Obj = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: 'leases.coordination.k8s.io',
        annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/pull/1111' },
      },
      spec: {
        group: 'coordination.k8s.io',
        scope: 'Namespaced',
        names: { plural: 'leases', kind: 'Lease' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      },
    };
    const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    expect(
      (await t.request(leases, { method: 'POST', body: { metadata: { name: 'keep' }, spec: {} } })).status,
    ).toBe(201);
    expect((await t.request(CRDS, { method: 'POST', body: clash })).status).toBe(201);
    const crd = (await t.request(`${CRDS}/leases.coordination.k8s.io`)).json as Obj;
    const conditions = crd.status?.conditions as { type: string; status: string }[];
    expect(conditions.find((c) => c.type === 'NamesAccepted')?.status).toBe('False');
    expect(conditions.find((c) => c.type === 'Established')?.status).toBe('False');
    expect((await t.request(`${CRDS}/leases.coordination.k8s.io`, { method: 'DELETE' })).status).toBe(200);
    expect((await t.request(`${leases}/keep`)).status).toBe(200);
  });

  it('deletes its objects and stops serving it when the CRD is deleted, ending its watches cleanly', async () => {
    const rv = ((await t.request(WIDGETS)).json as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;
    const w = await t.watch(`${WIDGETS}?watch=true&resourceVersion=${rv}`);
    const res = await t.request(`${CRDS}/widgets.example.com`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await w.ended).toBe('clean');
    expect(
      w.events
        .filter((e) => e.type === 'DELETED')
        .map((e) => (e.object.metadata as { name: string }).name)
        .sort(),
    ).toEqual(['b1', 'w1']);
    expect((await t.request(`${CRDS}/widgets.example.com`)).status).toBe(404);
    expect((await t.request(WIDGETS)).status).toBe(404);
    expect((await t.request('/apis/example.com/v1')).status).toBe(404);
    const index = (await t.request('/openapi/v3')).json as { paths: Record<string, unknown> };
    expect(index.paths['apis/example.com/v1']).toBeUndefined();
  });
});
