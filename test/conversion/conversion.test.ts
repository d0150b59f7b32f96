/**
 * CRDs with `conversion.strategy: Webhook`: objects are stored in the storage version (v1) and
 * every read, write and watch of another served version (v2) goes through a real WebhookServer
 * from @converge/kube (hub-and-spoke converter, generated CA as `caBundle`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { type ConversionHooks, startConversionHooks, widgetCrd, widgetV1, widgetV2 } from './support.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const V1 = '/apis/example.com/v1/namespaces/default/widgets';
const V2 = '/apis/example.com/v2/namespaces/default/widgets';
const STORED = { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };

let api: TestServer;
let hooks: ConversionHooks;

beforeAll(async () => {
  api = await startTestServer();
  hooks = await startConversionHooks();
  const created = await api.request(CRDS, {
    method: 'POST',
    body: widgetCrd({ url: `${hooks.url}/convert`, caBundle: hooks.caBundle }),
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await hooks.stop();
  await api.close();
});

beforeEach(async () => {
  expect((await api.request(V1, { method: 'DELETE' })).status).toBe(200);
  hooks.conversions.length = 0;
});

function stored(name: string): Promise<Record<string, unknown>> {
  return api.server.store.get(STORED, { namespace: 'default', name }) as unknown as Promise<
    Record<string, unknown>
  >;
}

describe('writes in another version', () => {
  it('a v2 create is stored as v1 and answered in v2 (two conversions)', async () => {
    const created = await api.request(V2, { method: 'POST', body: widgetV2('a', 3, 'red') });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: { name: 'a', namespace: 'default', generation: 1 },
      spec: { replicas: 3, paint: { color: 'red' } },
    });
    expect(await stored('a')).toMatchObject({
      apiVersion: 'example.com/v1',
      spec: { size: 3, color: 'red' },
    });
    expect(hooks.conversions).toEqual([
      'example.com/v2 -> example.com/v1 a',
      'example.com/v1 -> example.com/v2 a',
    ]);
  });

  it('PUT, merge patch and /status in v2 write the stored v1 object', async () => {
    await api.request(V2, { method: 'POST', body: widgetV2('b', 1, 'blue') });
    const current = (await api.request(`${V2}/b`)).json as Record<string, unknown>;
    const put = await api.request(`${V2}/b`, {
      method: 'PUT',
      body: { ...current, spec: { replicas: 2, paint: { color: 'green' } } },
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({
      apiVersion: 'example.com/v2',
      spec: { replicas: 2, paint: { color: 'green' } },
    });
    const patched = await api.request(`${V2}/b`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { replicas: 5 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ spec: { replicas: 5, paint: { color: 'green' } } });
    const status = await api.request(`${V2}/b/status`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { status: { ready: true } },
    });
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ apiVersion: 'example.com/v2', status: { ready: true } });
    expect(await stored('b')).toMatchObject({
      apiVersion: 'example.com/v1',
      spec: { size: 5, color: 'green' },
      status: { ready: true },
      metadata: { generation: 3 },
    });
  });

  it('/scale in v2 reads and writes the v2 replicas path of the converted object', async () => {
    await api.request(V1, { method: 'POST', body: widgetV1('scaled', 2, 'red') });
    expect((await api.request(`${V2}/scaled/scale`)).json).toMatchObject({
      kind: 'Scale',
      spec: { replicas: 2 },
    });
    const patched = await api.request(`${V2}/scaled/scale`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { replicas: 6 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ spec: { replicas: 6 } });
    expect(await stored('scaled')).toMatchObject({ spec: { size: 6, color: 'red' } });
  });

  it('server-side apply in v2 creates and updates through conversion', async () => {
    const apply = (replicas: number) =>
      api.request(`${V2}/applied?fieldManager=test`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        raw: JSON.stringify(widgetV2('applied', replicas, 'teal')),
      });
    expect((await apply(1)).status).toBe(201);
    const second = await apply(4);
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ apiVersion: 'example.com/v2', spec: { replicas: 4 } });
    expect(await stored('applied')).toMatchObject({ spec: { size: 4, color: 'teal' } });
  });

  it('a delete answered with the object (finalizer pending) is in the requested version', async () => {
    const plain = widgetV2('held', 1, 'red');
    const widget = { ...plain, metadata: { ...plain.metadata, finalizers: ['example.com/hold'] } };
    await api.request(V2, { method: 'POST', body: widget });
    const deleted = await api.request(`${V2}/held`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ apiVersion: 'example.com/v2', spec: { replicas: 1 } });
    await api.request(`${V1}/held`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { finalizers: null } },
    });
  });
});

describe('reads in both versions', () => {
  beforeEach(async () => {
    await api.request(V1, { method: 'POST', body: widgetV1('one', 1, 'red') });
    await api.request(V1, { method: 'POST', body: widgetV1('two', 2, 'blue') });
    hooks.conversions.length = 0;
  });

  it('get and list in the storage version call no webhook', async () => {
    expect((await api.request(`${V1}/one`)).json).toMatchObject({ spec: { size: 1, color: 'red' } });
    const list = (await api.request(V1)).json as { items: unknown[] };
    expect(list.items).toHaveLength(2);
    expect(hooks.conversions).toEqual([]);
  });

  it('get, list (JSON, pretty, YAML), label- and field-selected lists in v2 are converted', async () => {
    expect((await api.request(`${V2}/one`)).json).toMatchObject({
      apiVersion: 'example.com/v2',
      spec: { replicas: 1, paint: { color: 'red' } },
    });
    for (const query of ['', '?pretty=true', '?fieldSelector=metadata.name%3Dtwo', '?labelSelector=']) {
      const list = (await api.request(`${V2}${query}`)).json as {
        apiVersion: string;
        kind: string;
        items: Record<string, unknown>[];
      };
      expect(list.apiVersion).toBe('example.com/v2');
      expect(list.kind).toBe('WidgetList');
      for (const item of list.items) expect(item).toMatchObject({ apiVersion: 'example.com/v2', spec: {} });
    }
    const names = async (path: string): Promise<unknown[]> =>
      ((await api.request(path)).json as { items: { metadata: { name: string } }[] }).items.map(
        (i) => i.metadata.name,
      );
    // selectable fields are the requested version's: matched on the converted objects
    expect(await names(`${V2}?fieldSelector=spec.paint.color%3Dblue`)).toEqual(['two']);
    expect(await names(`${V1}?fieldSelector=spec.color%3Dblue`)).toEqual(['two']);
    expect(await names(`${V2}?fieldSelector=spec.paint.color%3Dblue&limit=1`)).toEqual(['two']);
    const table = await api.request(`${V2}?fieldSelector=spec.paint.color%3Dred`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(
      (table.json as { rows: { object: { metadata: { name: string } } }[] }).rows.map(
        (r) => r.object.metadata.name,
      ),
    ).toEqual(['one']);
    const yaml = await api.request(V2, { headers: { accept: 'application/yaml' } });
    expect(yaml.text).toContain('apiVersion: example.com/v2');
    expect(yaml.text).toContain('replicas: 2');
  });
});

describe('delete collection', () => {
  it('in v2 selects by the v2 fields and answers the deleted objects in v2', async () => {
    await api.request(V1, { method: 'POST', body: widgetV1('dc1', 1, 'gold') });
    await api.request(V1, { method: 'POST', body: widgetV1('dc2', 2, 'grey') });
    const deleted = await api.request(`${V2}?fieldSelector=spec.paint.color%3Dgold`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({
      apiVersion: 'example.com/v2',
      kind: 'WidgetList',
      items: [{ apiVersion: 'example.com/v2', metadata: { name: 'dc1' }, spec: { replicas: 1 } }],
    });
    expect((await api.request(`${V1}/dc2`)).status).toBe(200);
  });
});

describe('watches', () => {
  it('initial events, live events and bookmarks come in the watched version', async () => {
    await api.request(V1, { method: 'POST', body: widgetV1('w1', 1, 'red') });
    const watch = await api.watch(
      `${V2}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
    );
    await watch.waitFor(2);
    expect(watch.events[0]).toMatchObject({
      type: 'ADDED',
      object: { apiVersion: 'example.com/v2', spec: { replicas: 1, paint: { color: 'red' } } },
    });
    expect(watch.events[1]).toMatchObject({
      type: 'BOOKMARK',
      object: {
        apiVersion: 'example.com/v2',
        kind: 'Widget',
        metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } },
      },
    });
    await api.request(`${V1}/w1`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { size: 9 } },
    });
    await watch.waitFor(3);
    expect(watch.events[2]).toMatchObject({ type: 'MODIFIED', object: { spec: { replicas: 9 } } });
    watch.abort();
  });

  it('a field-selected watch matches the watched version: entering ADDED, leaving DELETED', async () => {
    const watch = await api.watch(`${V2}?watch=true&fieldSelector=spec.paint.color%3Dgreen`);
    await api.request(V1, { method: 'POST', body: widgetV1('f1', 1, 'green') });
    await api.request(V1, { method: 'POST', body: widgetV1('f2', 1, 'red') });
    await api.request(`${V1}/f1`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { color: 'blue' } },
    });
    await watch.waitFor(2);
    expect(watch.events.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([
      ['ADDED', 'f1'],
      ['DELETED', 'f1'],
    ]);
    expect(watch.events[0]?.object).toMatchObject({
      apiVersion: 'example.com/v2',
      spec: { paint: { color: 'green' } },
    });
    watch.abort();
  });

  it('an event the webhook cannot convert ends the watch with an ERROR event (500)', async () => {
    const watch = await api.watch(`${V2}?watch=true`);
    await api.request(V1, { method: 'POST', body: widgetV1('bad', 1, 'unconvertible-v1') });
    await watch.waitFor(1);
    expect(watch.events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', status: 'Failure', code: 500 },
    });
    expect(String(watch.events[0]?.object.message)).toMatch(
      /^conversion webhook for example\.com\/v1, Kind=Widget failed: .*colour unconvertible-v1 has no v2 form/,
    );
    expect(await watch.ended).toBe('clean');
  });
});

describe('clientConfig.service', () => {
  it('is reached on 127.0.0.1 at its port and path, the certificate checked for NAME.NAMESPACE.svc', async () => {
    const crd = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';
    const setClientConfig = (clientConfig: Record<string, unknown>) =>
      api.request(crd, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json-patch+json' },
        body: [{ op: 'replace', path: '/spec/conversion/webhook/clientConfig', value: clientConfig }],
      });
    await api.request(V1, { method: 'POST', body: widgetV1('svc', 4, 'red') });
    const service = { namespace: 'hooks', name: 'widgets', path: '/convert', port: hooks.port };
    expect((await setClientConfig({ service, caBundle: hooks.caBundle })).status).toBe(200);
    try {
      expect((await api.request(`${V2}/svc`)).json).toMatchObject({ spec: { replicas: 4 } });
      // a name the certificate does not carry fails the TLS check
      expect(
        (await setClientConfig({ service: { ...service, name: 'other' }, caBundle: hooks.caBundle })).status,
      ).toBe(200);
      const failed = await api.request(`${V2}/svc`);
      expect(failed.status).toBe(500);
      expect((failed.json as { message: string }).message).toMatch(
        /^conversion webhook for example\.com\/v1, Kind=Widget failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert\?timeout=30s": /,
      );
    } finally {
      await setClientConfig({ url: `${hooks.url}/convert`, caBundle: hooks.caBundle });
    }
  });
});

describe('conversion failures', () => {
  it('a webhook failure on a read or a write is a 500 naming the source version and kind', async () => {
    await api.request(V1, { method: 'POST', body: widgetV1('odd', 1, 'unconvertible-v1') });
    const read = await api.request(`${V2}/odd`);
    expect(read.status).toBe(500);
    expect(read.json).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    expect((read.json as { message: string }).message).toMatch(
      /^conversion webhook for example\.com\/v1, Kind=Widget failed: .*colour unconvertible-v1 has no v2 form/,
    );
    const list = await api.request(V2);
    expect(list.status).toBe(500);
    expect((list.json as { message: string }).message).toMatch(
      /^conversion webhook for example\.com\/v2, Kind=WidgetList failed: /,
    );
    const write = await api.request(V2, { method: 'POST', body: widgetV2('nope', 1, 'unconvertible') });
    expect(write.status).toBe(500);
    expect((write.json as { message: string }).message).toMatch(
      /^conversion webhook for example\.com\/v2, Kind=Widget failed: .*colour unconvertible has no v1 form/,
    );
    expect((await api.request(`${V1}/nope`)).status).toBe(404);
  });
});
