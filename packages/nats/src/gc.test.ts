import { isNotFound, type KubeObject, type OwnerReference, resourceType } from '@converge/runtime';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from './keys.ts';
import { NatsBackend } from './nats-backend.ts';
import { CM, NS, type TestBackend, testBackend } from './test-support.ts';

const APP = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'App',
  plural: 'apps',
  namespaced: true,
});

const app = (name: string): KubeObject =>
  ({ apiVersion: 'example.com/v1', kind: 'App', metadata: { name, namespace: NS } }) as KubeObject;
const configMap = (name: string, ownerReferences: OwnerReference[] = []): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, ownerReferences },
    data: {},
  }) as KubeObject;
const ref = (owner: KubeObject): OwnerReference => ({
  apiVersion: owner.apiVersion ?? '',
  kind: owner.kind ?? '',
  name: owner.metadata.name ?? '',
  uid: owner.metadata.uid ?? '',
  controller: true,
});

async function exists(backend: NatsBackend, name: string): Promise<boolean> {
  try {
    await backend.get(CM, { namespace: NS, name });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

describe('garbage collection of dependents whose owners are gone', () => {
  let t: TestBackend | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('collectGarbage deletes dependents of an owner another process deleted, prunes dangling references, and keeps the rest', async () => {
    // This process runs no automatic passes: only collectGarbage() can clean up.
    t = await testBackend([CM, APP], { garbageCollection: false });
    const { backend, url } = t;
    const gone = await backend.create(APP, app('gone'));
    const alive = await backend.create(APP, app('alive'));
    await backend.create(CM, configMap('orphaned', [ref(gone)]));
    await backend.create(CM, configMap('shared', [ref(gone), { ...ref(alive), controller: false }]));
    await backend.create(CM, configMap('owned', [ref(alive)]));
    await backend.create(
      CM,
      configMap('elsewhere', [{ apiVersion: 'other.io/v1', kind: 'Thing', name: 'x', uid: 'u-1' }]),
    );
    await backend.create(CM, configMap('plain'));
    // Another process deletes the owner with the plain KV client: no garbage collector sees it.
    const nc = await connect({ servers: url });
    const kv = await new Kvm(nc).open(backend.bucketName(APP));
    await kv.delete(encodeKey(NS, 'gone'));
    await nc.close();
    expect(await exists(backend, 'orphaned')).toBe(true);

    const result = await backend.collectGarbage();
    expect(result).toMatchObject({ deleted: 1, referencesRemoved: 1 });
    expect(await exists(backend, 'orphaned')).toBe(false);
    const shared = await backend.get(CM, { namespace: NS, name: 'shared' });
    expect(shared.metadata.ownerReferences?.map((r) => r.name)).toEqual(['alive']);
    for (const name of ['owned', 'elsewhere', 'plain']) expect(await exists(backend, name)).toBe(true);
    // A second pass finds nothing to do.
    expect(await backend.collectGarbage()).toMatchObject({
      deleted: 0,
      referencesRemoved: 0,
      finalizersRemoved: 0,
    });
  });

  it('a dependent whose owner was deleted and created again under the same name (another uid) is collected', async () => {
    t = await testBackend([CM, APP], { garbageCollection: false });
    const { backend } = t;
    const owner = await backend.create(APP, app('owner'));
    await backend.create(CM, configMap('dep', [ref(owner)]));
    // The reference names the first owner's uid: a new object with the same name is not its owner.
    await backend.delete(APP, { namespace: NS, name: 'owner' });
    await backend.create(APP, app('owner'));
    expect((await backend.collectGarbage()).deleted).toBe(1);
    expect(await exists(backend, 'dep')).toBe(false);
  });

  it('the garbageCollector runnable runs passes until its signal aborts', async () => {
    t = await testBackend([CM, APP], { garbageCollection: false });
    const { backend, url, prefix } = t;
    const owner = await backend.create(APP, app('owner'));
    await backend.create(CM, configMap('dep', [ref(owner)]));
    const other = await NatsBackend.connect({
      servers: url,
      types: [CM, APP],
      bucketPrefix: prefix,
      garbageCollection: false,
    });
    await other.delete(APP, { namespace: NS, name: 'owner' });
    await other.close();
    const abort = new AbortController();
    const runnable = backend.garbageCollector({ intervalMs: 50 });
    expect(runnable.needLeaderElection).toBe(true);
    const running = runnable.start(abort.signal);
    const deadline = Date.now() + 10_000;
    while ((await exists(backend, 'dep')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    await running;
    expect(await exists(backend, 'dep')).toBe(false);
    expect(backend.stats().garbageCollections).toBeGreaterThanOrEqual(1);
  });

  it('after its own Background delete the backend collects dependents in every bucket it serves', async () => {
    t = await testBackend([CM, APP]);
    const { backend } = t;
    const owner = await backend.create(APP, app('owner'));
    const child = await backend.create(APP, {
      ...app('child'),
      metadata: { name: 'child', namespace: NS, ownerReferences: [ref(owner)] },
    } as KubeObject);
    await backend.create(CM, configMap('grandchild', [ref(child)]));
    await backend.delete(APP, { namespace: NS, name: 'owner' });
    const deadline = Date.now() + 10_000;
    while ((await exists(backend, 'grandchild')) && Date.now() < deadline)
      await backend.garbageCollectionSettled();
    expect(await exists(backend, 'grandchild')).toBe(false);
    await expect(backend.get(APP, { namespace: NS, name: 'child' })).rejects.toSatisfy(isNotFound);
  });
});
