import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fnv1a64 } from '@converge/runtime';
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  type V1ConfigMap,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, createApiServer } from './api-server.ts';

let dir: string;
let server: ApiServer;
let kc: KubeConfig;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-client-node-'));
  const kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig, clusterDefaults: false });
  await server.listen();
  kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `check` until it holds (the informer works asynchronously). */
async function eventually(check: () => boolean, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('@kubernetes/client-node v2', () => {
  it('informer lists, watches, survives a dropped watch and a 410, and keeps its cache right', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = 'informed';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' } } });
    let lists = 0;
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => {
      lists++;
      return core.listNamespacedConfigMap({ namespace });
    });
    const added: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (cm) => added.push(cm.metadata?.name ?? ''));
    informer.on('error', (error) => errors.push(error));
    await informer.start();
    try {
      await eventually(() => added.includes('before'));
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'live' } } });
      await eventually(() => added.includes('live'));

      expect(server.dropWatches()).toBeGreaterThan(0);
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'after-drop' } } });
      await eventually(() => added.includes('after-drop'));

      // Changes made while the informer reconnects, then forgotten by the store: its resourceVersion
      // is too old, the watch answers ERROR 410, and the informer relists.
      expect(lists).toBe(1);
      const type = server.store.resolveType('v1', 'ConfigMap');
      if (type === undefined) throw new Error('ConfigMap is not served');
      server.dropWatches();
      const writes = [
        server.store.delete(type, { namespace, name: 'before' }),
        server.store.create(type, { metadata: { name: 'after-410', namespace } }),
      ];
      server.store.compact();
      await Promise.all(writes);
      await eventually(() => added.includes('after-410') && informer.get('before', namespace) === undefined);
      expect(lists).toBe(2);
      expect(
        informer
          .list(namespace)
          .map((cm) => cm.metadata?.name)
          .sort(),
      ).toEqual(['after-410', 'after-drop', 'live']);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });

  it('KubernetesObjectApi creates, reads, lists, replaces, patches and deletes', async () => {
    const api = KubernetesObjectApi.makeApiClient(kc);
    const spec = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'generic', namespace: 'default' },
      data: { a: '1' },
    };
    const created: KubernetesObject = await api.create(spec);
    expect(created.metadata?.uid).toBeDefined();
    const read = (await api.read({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'generic', namespace: 'default' },
    })) as V1ConfigMap;
    expect(read.data).toEqual({ a: '1' });
    const list = await api.list<KubernetesObject>('v1', 'ConfigMap', 'default');
    expect(list.items.map((i) => i.metadata?.name)).toContain('generic');
    const replaced = (await api.replace({ ...read, data: { a: '2' } })) as V1ConfigMap;
    expect(replaced.data).toEqual({ a: '2' });
    const merged = (await api.patch(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'generic', namespace: 'default' },
        data: { b: '3' },
      },
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    )) as V1ConfigMap;
    expect(merged.data).toEqual({ a: '2', b: '3' });
    const strategic = (await api.patch({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'generic', namespace: 'default' },
      data: { c: '4' },
    })) as V1ConfigMap;
    expect(strategic.data).toEqual({ a: '2', b: '3', c: '4' });
    const status = await api.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'generic', namespace: 'default' },
    });
    expect(status).toMatchObject({ status: 'Success' });
    const missing = await api
      .read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'generic', namespace: 'default' } })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiException);
    expect((missing as ApiException<unknown>).code).toBe(404);
  });

  it('surfaces a stale replace as a 409 ApiException', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const first = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'stale' } },
    });
    await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'stale',
      body: { ...first, data: { x: '1' } },
    });
    const error = await core
      .replaceNamespacedConfigMap({
        namespace: 'default',
        name: 'stale',
        body: { ...first, data: { x: '2' } },
      })
      .catch((e: unknown) => e);
    expect((error as ApiException<unknown>).code).toBe(409);
  });

  it('Watch passes shardSelector through and receives only the events of the shard', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const namespace = 'sharded';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const { metadata } = await core.listConfigMapForAllNamespaces();
    const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;
    const h = fnv1a64(namespace);
    const shardSelector = `shardRange(object.metadata.namespace, '${hex(h)}', '${hex(h + 1n)}')`;
    const seen: string[] = [];
    const controller = await new Watch(kc).watch(
      '/api/v1/configmaps',
      { resourceVersion: metadata?.resourceVersion, shardSelector },
      (phase, object: V1ConfigMap) =>
        seen.push(`${phase} ${object.metadata?.namespace}/${object.metadata?.name}`),
      () => {},
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'other-shard' } },
      });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'in-shard' } } });
      await eventually(() => seen.length >= 1);
      expect(seen).toEqual([`ADDED ${namespace}/in-shard`]);
    } finally {
      controller.abort();
    }
  });
});
