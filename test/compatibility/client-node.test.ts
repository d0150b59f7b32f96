// @kubernetes/client-node 2.x against the embedded server: the typed APIs, CustomObjectsApi, Watch, an
// informer, and KubernetesObjectApi server-side apply. (packages/apiserver's client-node.test.ts covers
// an informer's reconnects and KubernetesObjectApi CRUD; these are the flows a new operator author writes first.)
import {
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompatServer, startCompatServer } from './compat-test-support.ts';

let compat: CompatServer;
let kc: KubeConfig;
const namespace = 'node';

beforeAll(async () => {
  compat = await startCompatServer('client-node');
  kc = new KubeConfig();
  kc.loadFromFile(compat.kubeconfig);
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
});
afterAll(async () => {
  await compat.close();
});

/** Waits until `check` holds; the watch and the informer deliver asynchronously. */
async function eventually(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function apiError(promise: Promise<unknown>): Promise<{ code: number; reason: unknown }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiException);
  const api = error as ApiException<string>;
  return { code: api.code, reason: (JSON.parse(api.body) as { reason: unknown }).reason };
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('@kubernetes/client-node', () => {
  it('client-node: list namespaces — CoreV1Api.listNamespace sees the system namespaces', async () => {
    const list = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(list.items.map((ns) => ns.metadata?.name).sort()).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
      namespace,
    ]);
  });

  it('client-node: configmap — create, get, JSON patch, merge patch, delete, then 404', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });
    const got = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(got.metadata?.uid).toBe(created.metadata?.uid);
    const json = await core.patchNamespacedConfigMap({
      namespace,
      name: 'settings',
      body: [{ op: 'add', path: '/data/b', value: '2' }],
    });
    expect(json.data).toEqual({ a: '1', b: '2' });
    const merged = await core.patchNamespacedConfigMap(
      { namespace, name: 'settings', body: { data: { a: null } } },
      mergePatch,
    );
    expect(merged.data).toEqual({ b: '2' });
    await core.deleteNamespacedConfigMap({ namespace, name: 'settings' });
    expect(await apiError(core.readNamespacedConfigMap({ namespace, name: 'settings' }))).toEqual({
      code: 404,
      reason: 'NotFound',
    });
  });

  it('client-node: deployment — AppsV1Api create with defaults, patch replicas, read scale, delete', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const labels = { app: 'web' };
    const created = await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
        },
      },
    });
    expect([
      created.spec?.replicas,
      created.spec?.strategy?.type,
      created.spec?.progressDeadlineSeconds,
    ]).toEqual([1, 'RollingUpdate', 600]);
    expect(created.spec?.template.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');
    const patched = await apps.patchNamespacedDeployment(
      { namespace, name: 'web', body: { spec: { replicas: 4 } } },
      mergePatch,
    );
    expect([patched.spec?.replicas, patched.metadata?.generation]).toEqual([4, 2]);
    const scale = await apps.readNamespacedDeploymentScale({ namespace, name: 'web' });
    expect([scale.spec?.replicas, scale.status?.selector]).toEqual([4, 'app=web']);
    await apps.deleteNamespacedDeployment({ namespace, name: 'web' });
    expect((await apps.listNamespacedDeployment({ namespace })).items).toEqual([]);
  });

  it('client-node: errors — 404, 409 and 422 surface as ApiException with the code and Status reason', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    expect(await apiError(core.readNamespacedConfigMap({ namespace, name: 'missing' }))).toEqual({
      code: 404,
      reason: 'NotFound',
    });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'twice' } } });
    expect(
      await apiError(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'twice' } } })),
    ).toEqual({ code: 409, reason: 'AlreadyExists' });
    expect(
      await apiError(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'Bad_Name' } } })),
    ).toEqual({ code: 422, reason: 'Invalid' });
  });

  it('client-node: watch — Watch.watch sees ADDED, MODIFIED, DELETED in order', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const seen: string[] = [];
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { fieldSelector: 'metadata.name=watched' },
      (phase, object: V1ConfigMap) => seen.push(`${phase} ${object.metadata?.name}`),
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'watched' } } });
      await eventually(() => seen.length === 1);
      await core.patchNamespacedConfigMap(
        { namespace, name: 'watched', body: { data: { x: 'y' } } },
        mergePatch,
      );
      await eventually(() => seen.length === 2);
      await core.deleteNamespacedConfigMap({ namespace, name: 'watched' });
      await eventually(() => seen.length === 3);
      expect(seen).toEqual(['ADDED watched', 'MODIFIED watched', 'DELETED watched']);
    } finally {
      controller.abort();
    }
  });

  it('client-node: informer — makeInformer lists, then adds, updates and deletes from its watch', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: 'informed=yes' }),
      'informed=yes',
    );
    const events: string[] = [];
    informer.on('add', (cm) => events.push(`add ${cm.metadata?.name}`));
    informer.on('update', (cm) => events.push(`update ${cm.metadata?.name}`));
    informer.on('delete', (cm) => events.push(`delete ${cm.metadata?.name}`));
    const labels = { informed: 'yes' };
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'first', labels } } });
    await informer.start();
    try {
      await eventually(() => events.length === 1);
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'second', labels } } });
      await eventually(() => events.length === 2);
      await core.patchNamespacedConfigMap(
        { namespace, name: 'second', body: { data: { v: '1' } } },
        mergePatch,
      );
      await eventually(() => events.length === 3);
      await core.deleteNamespacedConfigMap({ namespace, name: 'first' });
      await eventually(() => events.length === 4);
      expect(events).toEqual(['add first', 'add second', 'update second', 'delete first']);
      expect(informer.list().map((cm) => cm.metadata?.name)).toEqual(['second']);
    } finally {
      await informer.stop();
    }
  });

  it('client-node: custom objects — a CRD becomes Established; CustomObjectsApi create, get, merge patch, status, list, 422', async () => {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer' } } },
                    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    let established = false;
    const deadline = Date.now() + 5_000;
    while (!established && Date.now() < deadline) {
      const crd = await ext.readCustomResourceDefinition({ name: 'gadgets.example.com' });
      established = (crd.status?.conditions ?? []).some(
        (c) => c.type === 'Established' && c.status === 'True',
      );
    }
    expect(established).toBe(true);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const at = { group: 'example.com', version: 'v1', namespace, plural: 'gadgets' };
    await custom.createNamespacedCustomObject({
      ...at,
      body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 } },
    });
    const got = (await custom.getNamespacedCustomObject({ ...at, name: 'g' })) as { spec: { size: number } };
    expect(got.spec.size).toBe(1);
    const patched = (await custom.patchNamespacedCustomObject(
      { ...at, name: 'g', body: { spec: { size: 2 } } },
      mergePatch,
    )) as { spec: { size: number } };
    expect(patched.spec.size).toBe(2);
    const status = (await custom.patchNamespacedCustomObjectStatus(
      { ...at, name: 'g', body: { status: { ready: true }, spec: { size: 9 } } },
      mergePatch,
    )) as { spec: { size: number }; status: { ready: boolean } };
    expect([status.status.ready, status.spec.size]).toEqual([true, 2]);
    const list = (await custom.listNamespacedCustomObject(at)) as { kind: string; items: KubernetesObject[] };
    expect([list.kind, list.items.map((o) => o.metadata?.name)]).toEqual(['GadgetList', ['g']]);
    const invalid = custom.createNamespacedCustomObject({
      ...at,
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'bad' },
        spec: { size: 'big' },
      },
    });
    expect(await apiError(invalid)).toEqual({ code: 422, reason: 'Invalid' });
  });

  it('client-node: server-side apply — KubernetesObjectApi.patch with apply-patch+yaml creates, then updates, owned by its manager', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const manifest = (replicas: string): KubernetesObject & { data: Record<string, string> } => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', namespace },
      data: { replicas },
    });
    const apply = (data: string): Promise<KubernetesObject> =>
      objects.patch(manifest(data), undefined, undefined, 'compat', true, PatchStrategy.ServerSideApply);
    await apply('1');
    const updated = (await apply('2')) as V1ConfigMap;
    expect(updated.data).toEqual({ replicas: '2' });
    expect(updated.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toEqual([
      ['compat', 'Apply'],
    ]);
  });
});
