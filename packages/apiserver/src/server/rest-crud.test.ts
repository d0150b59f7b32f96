import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; [k: string]: unknown };

async function create(path: string, body: unknown): Promise<Obj> {
  const res = await t.request(path, { method: 'POST', body });
  expect(res.status, res.text).toBe(201);
  return res.json as Obj;
}

describe('create, get, update', () => {
  it('creates with 201, filling apiVersion, kind, namespace, uid, creationTimestamp and resourceVersion', async () => {
    const created = await create(CM, { metadata: { name: 'c1' }, data: { a: '1' } });
    expect(created).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c1', namespace: 'default' },
    });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const got = await t.request(`${CM}/c1`);
    expect(got.json).toEqual(created);
  });

  it('accepts YAML request bodies', async () => {
    const res = await t.request(CM, {
      method: 'POST',
      raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(res.status).toBe(201);
    expect((res.json as Obj).data).toEqual({ k: 'v' });
  });

  it('reports AlreadyExists as a 409 Status naming the resource', async () => {
    await create(CM, { metadata: { name: 'dup' } });
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: 'dup' } } });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'AlreadyExists',
      message: 'configmaps "dup" already exists',
      details: { name: 'dup', kind: 'configmaps' },
      code: 409,
    });
  });

  it('updates with PUT, and a stale resourceVersion is a 409 Conflict', async () => {
    const created = await create(CM, { metadata: { name: 'u1' }, data: { a: '1' } });
    const updated = await t.request(`${CM}/u1`, { method: 'PUT', body: { ...created, data: { a: '2' } } });
    expect(updated.status).toBe(200);
    expect(Number((updated.json as Obj).metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    );
    const stale = await t.request(`${CM}/u1`, { method: 'PUT', body: { ...created, data: { a: '3' } } });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      reason: 'Conflict',
      message: expect.stringContaining('Operation cannot be fulfilled on configmaps "u1"'),
    });
  });

  it('allows an unconditional PUT (no resourceVersion) of a ConfigMap', async () => {
    await create(CM, { metadata: { name: 'u2' } });
    const res = await t.request(`${CM}/u2`, {
      method: 'PUT',
      body: { metadata: { name: 'u2' }, data: { x: 'y' } },
    });
    expect(res.status).toBe(200);
  });

  it('answers 404 for a PUT to a missing ConfigMap but creates a missing Lease (201)', async () => {
    const missing = await t.request(`${CM}/nope`, { method: 'PUT', body: { metadata: { name: 'nope' } } });
    expect(missing.status).toBe(404);
    const lease = await t.request('/apis/coordination.k8s.io/v1/namespaces/default/leases/leader', {
      method: 'PUT',
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'leader' },
        spec: { holderIdentity: 'a', renewTime: '2024-01-01T00:00:00.000000Z' },
      },
    });
    expect(lease.status).toBe(201);
    expect((lease.json as Obj).spec).toEqual({
      holderIdentity: 'a',
      renewTime: '2024-01-01T00:00:00.000000Z',
    });
  });

  it('rejects creation in a missing namespace with 404 namespaces "x" not found', async () => {
    const res = await t.request('/api/v1/namespaces/ghost/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'a' } },
    });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ reason: 'NotFound', message: 'namespaces "ghost" not found' });
  });

  it('does not persist anything with dryRun=All', async () => {
    const res = await t.request(`${CM}?dryRun=All`, { method: 'POST', body: { metadata: { name: 'dry' } } });
    expect(res.status).toBe(201);
    expect((await t.request(`${CM}/dry`)).status).toBe(404);
  });

  it('answers get in YAML when asked', async () => {
    await create(CM, { metadata: { name: 'y1' }, data: { k: 'v' } });
    const res = await t.request(`${CM}/y1`, { headers: { accept: 'application/yaml' } });
    expect(res.headers['content-type']).toBe('application/yaml');
    expect(res.text).toContain('kind: ConfigMap');
  });

  it('answers protobuf-first Accept headers with protobuf, and JSON-first ones with JSON', async () => {
    await create(CM, { metadata: { name: 'pb' } });
    const res = await t.request(`${CM}/pb`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' },
    });
    expect(res.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    expect(res.text.startsWith('k8s\u0000')).toBe(true);
    const json = await t.request(`${CM}/pb`, {
      headers: { accept: 'application/json,application/vnd.kubernetes.protobuf' },
    });
    expect(json.headers['content-type']).toBe('application/json');
    expect((json.json as Obj).kind).toBe('ConfigMap');
  });
});

describe('built-in strategies', () => {
  it('labels new namespaces with their name and marks them Active', async () => {
    const ns = await create('/api/v1/namespaces', { metadata: { name: 'team-a' } });
    expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team-a' });
    expect(ns.status).toEqual({ phase: 'Active' });
  });

  it('has default, kube-system, kube-public and kube-node-lease at start', async () => {
    const list = (await t.request('/api/v1/namespaces')).json as { items: Obj[] };
    expect(list.items.map((n) => n.metadata.name)).toEqual(
      expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']),
    );
  });

  it('merges Secret stringData into base64 data and defaults the type to Opaque', async () => {
    const secret = await create('/api/v1/namespaces/default/secrets', {
      metadata: { name: 's1' },
      stringData: { password: 'hunter2' },
    });
    expect(secret.data).toEqual({ password: Buffer.from('hunter2').toString('base64') });
    expect(secret.type).toBe('Opaque');
    expect(secret.stringData).toBeUndefined();
  });

  it('keeps an immutable ConfigMap unchanged (422)', async () => {
    const cm = await create(CM, { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true });
    const res = await t.request(`${CM}/frozen`, { method: 'PUT', body: { ...cm, data: { a: '2' } } });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      reason: 'Invalid',
      details: { kind: 'ConfigMap', causes: [{ field: 'data' }] },
    });
  });

  it('defaults Deployments, bumps generation on spec changes only, and keeps status on the main resource', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const template = {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
    };
    const dep = await create(path, {
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template },
      status: { replicas: 9 },
    });
    expect(dep.metadata.generation).toBe(1);
    expect(dep.spec).toMatchObject({
      replicas: 1,
      strategy: { type: 'RollingUpdate' },
      revisionHistoryLimit: 10,
    });
    expect(dep.status).toBeUndefined();
    const labelled = await t.request(`${path}/web`, {
      method: 'PATCH',
      body: { metadata: { labels: { x: 'y' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((labelled.json as Obj).metadata.generation).toBe(1);
    const scaled = await t.request(`${path}/web`, {
      method: 'PATCH',
      body: { spec: { replicas: 3 } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((scaled.json as Obj).metadata.generation).toBe(2);
  });

  it('rejects a Deployment whose selector does not match its template labels (422)', async () => {
    const res = await t.request('/apis/apps/v1/namespaces/default/deployments', {
      method: 'POST',
      body: {
        metadata: { name: 'bad' },
        spec: {
          selector: { matchLabels: { app: 'x' } },
          template: { metadata: { labels: { app: 'y' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ details: { causes: [{ field: 'spec.template.metadata.labels' }] } });
  });

  it('serves the scale subresource of a Deployment as autoscaling/v1 Scale', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments';
    await create(path, {
      metadata: { name: 'sc' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'sc' } },
        template: { metadata: { labels: { app: 'sc' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const scale = await t.request(`${path}/sc/scale`);
    expect(scale.json).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 2 },
      status: { replicas: 0, selector: 'app=sc' },
    });
    const patched = await t.request(`${path}/sc/scale`, {
      method: 'PATCH',
      body: { spec: { replicas: 5 } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.json).toMatchObject({ kind: 'Scale', spec: { replicas: 5 } });
    expect(((await t.request(`${path}/sc`)).json as { spec: { replicas: number } }).spec.replicas).toBe(5);
    const negative = await t.request(`${path}/sc/scale`, {
      method: 'PUT',
      body: { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'sc' }, spec: { replicas: -1 } },
    });
    expect(negative.status).toBe(422);
  });

  it('writes only status through /status and ignores status on the main resource', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const dep = await create(path, {
      metadata: { name: 'st' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const res = await t.request(`${path}/st/status`, {
      method: 'PUT',
      body: { ...dep, metadata: { ...dep.metadata, labels: { ignored: 'yes' } }, status: { replicas: 1 } },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: { replicas: 1 } });
    expect((res.json as Obj).metadata.labels).toBeUndefined();
  });

  it('gives Pods phase Pending and keeps pod status out of main-resource writes', async () => {
    const pod = await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(pod.status).toMatchObject({ phase: 'Pending' });
    expect(pod.spec).toMatchObject({ restartPolicy: 'Always', containers: [{ imagePullPolicy: 'Always' }] });
    const patched = await t.request('/api/v1/namespaces/default/pods/p', {
      method: 'PATCH',
      body: { status: { phase: 'Running' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((patched.json as Obj).status).toMatchObject({ phase: 'Pending' });
    const status = await t.request('/api/v1/namespaces/default/pods/p/status', {
      method: 'PATCH',
      body: { status: { phase: 'Running' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((status.json as Obj).status).toMatchObject({ phase: 'Running' });
  });

  it('serves core Events as events.k8s.io/v1 Events too (regarding, note)', async () => {
    await create('/api/v1/namespaces/default/events', {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'ConfigMap', name: 'c1', namespace: 'default' },
      message: 'hello',
      reason: 'Test',
      type: 'Normal',
    });
    const viewed = (await t.request('/apis/events.k8s.io/v1/namespaces/default/events/e1')).json as Obj;
    expect(viewed).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      note: 'hello',
      regarding: { kind: 'ConfigMap', name: 'c1' },
    });
    const created = await create('/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'e2' },
      regarding: { kind: 'Pod', name: 'p' },
      note: 'new style',
      reason: 'R',
      type: 'Normal',
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'c',
      reportingInstance: 'i',
      action: 'A',
    });
    expect(created).toMatchObject({ apiVersion: 'events.k8s.io/v1', note: 'new style' });
    const core = (await t.request('/api/v1/namespaces/default/events/e2')).json as Obj;
    expect(core).toMatchObject({
      apiVersion: 'v1',
      message: 'new style',
      involvedObject: { kind: 'Pod' },
      reportingComponent: 'c',
    });
  });
});
