import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const NS = '/api/v1/namespaces/list-ns';
type List = {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }[];
};

beforeAll(async () => {
  t = await startTestServer();
  await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'list-ns' } } });
  for (let i = 0; i < 12; i++) {
    const res = await t.request(`${NS}/configmaps`, {
      method: 'POST',
      body: {
        metadata: {
          name: `cm-${String(i).padStart(2, '0')}`,
          labels: { tier: i % 2 === 0 ? 'even' : 'odd', n: String(i) },
        },
      },
    });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

describe('list', () => {
  it('returns a typed list with kind, apiVersion, resourceVersion and items carrying kind and apiVersion', async () => {
    const list = (await t.request(`${NS}/configmaps`)).json as List;
    expect(list).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(list.items).toHaveLength(12);
    expect(list.items.every((i) => i.kind === 'ConfigMap' && i.apiVersion === 'v1')).toBe(true);
    expect(list.items.map((i) => i.metadata.name)).toEqual(
      [...list.items.map((i) => i.metadata.name)].sort(),
    );
  });

  it('pages with limit and continue from one snapshot', async () => {
    const first = (await t.request(`${NS}/configmaps?limit=5`)).json as List;
    expect(first.items).toHaveLength(5);
    expect(first.metadata.remainingItemCount).toBe(7);
    await t.request(`${NS}/configmaps`, { method: 'POST', body: { metadata: { name: 'cm-zz-late' } } });
    const names = first.items.map((i) => i.metadata.name);
    let token = first.metadata.continue;
    while (token !== undefined) {
      const page = (await t.request(`${NS}/configmaps?limit=5&continue=${encodeURIComponent(token)}`))
        .json as List;
      expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      names.push(...page.items.map((i) => i.metadata.name));
      token = page.metadata.continue;
    }
    expect(names).toHaveLength(12);
    expect(names).not.toContain('cm-zz-late');
    await t.request(`${NS}/configmaps/cm-zz-late`, { method: 'DELETE' });
  });

  it('filters by label selector (=, !=, in, notin, exists)', async () => {
    const names = async (selector: string): Promise<string[]> =>
      (
        (await t.request(`${NS}/configmaps?labelSelector=${encodeURIComponent(selector)}`)).json as List
      ).items.map((i) => i.metadata.name);
    expect(await names('tier=even')).toHaveLength(6);
    expect(await names('tier!=even')).toHaveLength(6);
    expect(await names('n in (1,2,3)')).toEqual(['cm-01', 'cm-02', 'cm-03']);
    expect(await names('tier=odd,n notin (1,3)')).toEqual(['cm-05', 'cm-07', 'cm-09', 'cm-11']);
    expect(await names('!tier')).toEqual([]);
  });

  it('filters by metadata.name and metadata.namespace field selectors, across namespaces at the cluster path', async () => {
    const one = (
      await t.request(`/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.name=cm-03')}`)
    ).json as List;
    expect(one.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(['list-ns/cm-03']);
    const inNs = (await t.request(`/api/v1/configmaps?fieldSelector=metadata.namespace%3Dlist-ns`))
      .json as List;
    expect(inNs.items).toHaveLength(12);
  });

  it('filters Events by involvedObject fields as kubectl describe asks', async () => {
    const make = (name: string, target: string): Promise<unknown> =>
      t.request('/api/v1/namespaces/list-ns/events', {
        method: 'POST',
        body: {
          metadata: { name },
          involvedObject: { kind: 'ConfigMap', name: target, namespace: 'list-ns' },
          reason: 'R',
          message: 'm',
          source: { component: 'me' },
        },
      });
    await make('ev-a', 'cm-01');
    await make('ev-b', 'cm-02');
    const selector = encodeURIComponent(
      'involvedObject.name=cm-01,involvedObject.namespace=list-ns,involvedObject.kind=ConfigMap',
    );
    const list = (await t.request(`${NS}/events?fieldSelector=${selector}&limit=500`)).json as List;
    expect(list.items.map((i) => i.metadata.name)).toEqual(['ev-a']);
    const bySource = (await t.request(`${NS}/events?fieldSelector=source%3Dme`)).json as List;
    expect(bySource.items).toHaveLength(2);
  });

  it('rejects an unsupported field selector with 400 naming the field', async () => {
    const res = await t.request(`${NS}/configmaps?fieldSelector=data.a%3D1`);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: data.a' });
  });

  it('serves resourceVersion=0 and NotOlderThan, and 410 for an Exact list past the history', async () => {
    expect((await t.request(`${NS}/configmaps?resourceVersion=0&limit=500`)).status).toBe(200);
    const list = (await t.request(`${NS}/configmaps`)).json as List;
    const rv = list.metadata.resourceVersion;
    const notOlder = await t.request(
      `${NS}/configmaps?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`,
    );
    expect(notOlder.status).toBe(200);
    await t.request(`${NS}/configmaps`, { method: 'POST', body: { metadata: { name: 'after-compact' } } });
    t.server.store.compact();
    const exact = await t.request(`${NS}/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);
    expect(exact.json).toMatchObject({ reason: 'Expired' });
    await t.request(`${NS}/configmaps/after-compact`, { method: 'DELETE' });
  });

  it('validates ListOptions: resourceVersionMatch without resourceVersion and sendInitialEvents on a list are 422', async () => {
    const noRv = await t.request(`${NS}/configmaps?resourceVersionMatch=Exact`);
    expect(noRv.status).toBe(422);
    expect(noRv.json).toMatchObject({
      reason: 'Invalid',
      details: { kind: 'ListOptions', group: 'meta.k8s.io' },
    });
    const sie = await t.request(`${NS}/configmaps?sendInitialEvents=true`);
    expect(sie.status).toBe(422);
  });

  it('answers an invalid continue token with 400', async () => {
    const res = await t.request(`${NS}/configmaps?limit=1&continue=not-a-token`);
    expect(res.status).toBe(400);
  });

  it('lists metadata only for PartialObjectMetadataList requests', async () => {
    const res = await t.request(`${NS}/configmaps`, {
      headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' },
    });
    const list = res.json as List;
    expect(list.kind).toBe('PartialObjectMetadataList');
    expect(list.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
  });
});

describe('delete', () => {
  it('answers a ConfigMap delete with a Success Status naming the resource and uid', async () => {
    const created = (
      await t.request(`${NS}/configmaps`, { method: 'POST', body: { metadata: { name: 'gone' } } })
    ).json as { metadata: { uid: string } };
    const res = await t.request(`${NS}/configmaps/gone`, { method: 'DELETE' });
    expect(res.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'gone', kind: 'configmaps', uid: created.metadata.uid },
      code: 200,
    });
    expect((await t.request(`${NS}/configmaps/gone`)).status).toBe(404);
  });

  it('answers a Pod delete with the Pod, and keeps an object with finalizers terminating', async () => {
    await t.request(`${NS}/pods`, {
      method: 'POST',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    const pod = await t.request(`${NS}/pods/p`, { method: 'DELETE' });
    expect(pod.json).toMatchObject({ kind: 'Pod', metadata: { name: 'p' } });
    await t.request(`${NS}/configmaps`, {
      method: 'POST',
      body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } },
    });
    const held = await t.request(`${NS}/configmaps/held`, {
      method: 'DELETE',
      body: { propagationPolicy: 'Background' },
    });
    expect(held.status).toBe(200);
    expect(held.json).toMatchObject({
      kind: 'ConfigMap',
      metadata: { deletionTimestamp: expect.any(String), finalizers: ['example.com/hold'] },
    });
    const removed = await t.request(`${NS}/configmaps/held`, {
      method: 'PATCH',
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(removed.status).toBe(200);
    expect((await t.request(`${NS}/configmaps/held`)).status).toBe(404);
  });

  it('checks delete preconditions (409) and honours dryRun', async () => {
    await t.request(`${NS}/configmaps`, { method: 'POST', body: { metadata: { name: 'pre' } } });
    const wrong = await t.request(`${NS}/configmaps/pre`, {
      method: 'DELETE',
      body: { preconditions: { uid: 'nope' } },
    });
    expect(wrong.status).toBe(409);
    const dry = await t.request(`${NS}/configmaps/pre?dryRun=All`, { method: 'DELETE' });
    expect(dry.status).toBe(200);
    expect((await t.request(`${NS}/configmaps/pre`)).status).toBe(200);
  });

  it('deletes a collection by label selector and lists what it deleted', async () => {
    const res = await t.request(`${NS}/configmaps?labelSelector=tier%3Dodd`, { method: 'DELETE' });
    const list = res.json as List;
    expect(list.kind).toBe('ConfigMapList');
    expect(list.items).toHaveLength(6);
    const rest = (await t.request(`${NS}/configmaps?labelSelector=tier`)).json as List;
    expect(rest.items.every((i) => Number(i.metadata.name.slice(3)) % 2 === 0)).toBe(true);
  });

  it('answers a Namespace delete with the terminating namespace, then empties and removes it', async () => {
    await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'doomed' } } });
    await t.request('/api/v1/namespaces/doomed/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'x' } },
    });
    const res = await t.request('/api/v1/namespaces/doomed', { method: 'DELETE' });
    expect(res.json).toMatchObject({ kind: 'Namespace', status: { phase: 'Terminating' } });
    await t.server.store.gcSettled();
    expect((await t.request('/api/v1/namespaces/doomed/configmaps/x')).status).toBe(404);
    expect((await t.request('/api/v1/namespaces/doomed')).status).toBe(404);
  });
});
