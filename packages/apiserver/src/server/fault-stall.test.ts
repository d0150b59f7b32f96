import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './fault-test-support.ts';
import { startTestServer, type TestServer } from './test-support.ts';

const CM = '/api/v1/namespaces/default/configmaps';
const SECRETS = '/api/v1/namespaces/default/secrets';
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ secure: true });
});
afterEach(() => {
  t.server.faults.clear();
});
afterAll(async () => {
  await t.close();
});

async function currentRv(path: string): Promise<string> {
  return ((await t.request(path)).json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

function names(events: { object: Record<string, unknown> }[]): string[] {
  return events.map((e) => (e.object.metadata as { name: string }).name);
}

describe('faults.stallWatches', () => {
  it('holds the events of an open watch without closing it, then sends them in order on release', async () => {
    const w = await t.watch(`${CM}?watch=true&resourceVersion=${await currentRv(CM)}`);
    const stall = t.server.faults.stallWatches({ pathPattern: CM });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'held-1' } } });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'held-2' } } });
    await eventually(() => t.server.faults.heldWatches === 1);
    expect(w.events).toEqual([]);
    expect(t.server.openWatches).toBe(1);
    expect(stall.release()).toBe(true);
    await w.waitFor(2);
    expect(names(w.events)).toEqual(['held-1', 'held-2']);
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'after-release' } } });
    await w.waitFor(3);
    expect(t.server.faults.heldWatches).toBe(0);
    w.abort();
  });

  it('stalls new matching watches too (headers sent, no initial events) until released', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'initial' } } });
    const stall = t.server.faults.stallWatches();
    const w = await t.watch(`${CM}?watch=true&fieldSelector=metadata.name%3Dinitial`);
    expect(w.status).toBe(200);
    await eventually(() => t.server.faults.heldWatches === 1);
    expect(w.events).toEqual([]);
    stall.remove();
    await w.waitFor(1);
    expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'initial' } } });
    w.abort();
  });

  it('leaves watches on other paths alone, and holds a watch while any matching rule remains', async () => {
    const secrets = await t.watch(`${SECRETS}?watch=true&resourceVersion=${await currentRv(SECRETS)}`);
    const cms = await t.watch(`${CM}?watch=true&resourceVersion=${await currentRv(CM)}`);
    const first = t.server.faults.stallWatches({ pathPattern: /configmaps$/ });
    const second = t.server.faults.stallWatches({ pathPattern: '/api/v1/namespaces/*/configmaps' });
    await t.request(SECRETS, { method: 'POST', body: { metadata: { name: 'flows' } } });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'stuck' } } });
    await secrets.waitFor(1);
    await eventually(() => t.server.faults.heldWatches === 1);
    first.release();
    await t.request('/version');
    expect(cms.events).toEqual([]);
    second.release();
    await cms.waitFor(1);
    expect(names(cms.events)).toEqual(['stuck']);
    expect(t.server.faults.counters.stalledWatches).toBeGreaterThanOrEqual(1);
    secrets.abort();
    cms.abort();
  });

  it('lets a held watch end cleanly when watches are dropped, without its held events', async () => {
    const w = await t.watch(`${CM}?watch=true&resourceVersion=${await currentRv(CM)}`);
    t.server.faults.stallWatches({ pathPattern: CM });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'dropped-while-held' } } });
    await eventually(() => t.server.faults.heldWatches === 1);
    expect(t.server.faults.dropWatches()).toBe(1);
    expect(await w.ended).toBe('clean');
    expect(w.events).toEqual([]);
    expect(t.server.faults.heldWatches).toBe(0);
  });

  it('frees a held watch whose client leaves', async () => {
    const w = await t.watch(`${CM}?watch=true&resourceVersion=${await currentRv(CM)}`);
    t.server.faults.stallWatches({ pathPattern: CM });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'client-left' } } });
    await eventually(() => t.server.faults.heldWatches === 1);
    w.abort();
    await eventually(() => t.server.faults.heldWatches === 0 && t.server.openWatches === 0);
  });
});

describe('@kubernetes/client-node v2 informer and a stalled watch', () => {
  it('misses nothing: changes made while its watch is stalled arrive once released', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(t.server.kubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = 'stalled-informer';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' } } });
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const informer = makeInformer<V1ConfigMap>(kc, path, () => core.listNamespacedConfigMap({ namespace }));
    const added: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (cm) => added.push(cm.metadata?.name ?? ''));
    informer.on('error', (error) => errors.push(error));
    await informer.start();
    try {
      await eventually(() => added.includes('before') && t.server.openWatches === 1);
      const stall = t.server.faults.stallWatches({ pathPattern: path });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'during-stall' } } });
      await core.deleteNamespacedConfigMap({ namespace, name: 'before' });
      await eventually(() => t.server.faults.heldWatches === 1);
      expect(added).toEqual(['before']);
      expect(informer.get('before', namespace)).toBeDefined();
      stall.release();
      await eventually(
        () => added.includes('during-stall') && informer.get('before', namespace) === undefined,
      );
      expect(informer.list(namespace).map((cm) => cm.metadata?.name)).toEqual(['during-stall']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
