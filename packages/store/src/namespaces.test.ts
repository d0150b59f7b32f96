import { ForbiddenError, NotFoundError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import type { Store } from './store.ts';
import { CM, cm, makeStore, NAMESPACE, WIDGET, widget } from './testdata/fixtures.ts';

const HOLD = 'example.com/hold';
const NS_KEY = { namespace: '', name: 'team' };

async function names(store: Store, type: typeof CM, namespace: string): Promise<string[]> {
  return (await store.list(type, { namespace })).items.map((o) => o.metadata.name as string);
}

async function setup(): Promise<Store> {
  const { store } = makeStore();
  await store.create(NAMESPACE, { metadata: { name: 'team' } });
  await store.create(CM, cm('a', {}, { namespace: 'team' }));
  await store.create(WIDGET, widget('w', {}, { namespace: 'team' }));
  await store.create(CM, cm('a', {}, { namespace: 'other' }));
  return store;
}

describe('namespace deletion', () => {
  it('deleting a Namespace marks it Terminating, deletes its content, then removes it', async () => {
    const store = await setup();
    const result = await store.delete(NAMESPACE, NS_KEY);
    if (result.status !== 'pending') return expect.fail('a namespace delete is pending');
    expect(result.object.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect((result.object as { status?: unknown }).status).toEqual({ phase: 'Terminating' });
    await store.gcSettled();
    expect(await names(store, CM, 'team')).toEqual([]);
    expect(await names(store, WIDGET, 'team')).toEqual([]);
    await expect(store.get(NAMESPACE, NS_KEY)).rejects.toBeInstanceOf(NotFoundError);
    expect(await names(store, CM, 'other')).toEqual(['a']);
  });

  it('while terminating, creates in the namespace are ForbiddenErrors with the Kubernetes message', async () => {
    const store = await setup();
    await store.create(CM, cm('held', {}, { namespace: 'team', finalizers: [HOLD] }));
    await store.delete(NAMESPACE, NS_KEY);
    const error = await store.create(CM, cm('new', {}, { namespace: 'team' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as Error).message).toBe(
      'configmaps "new" is forbidden: unable to create new content in namespace team because it is being terminated',
    );
    await store.create(CM, cm('new', {}, { namespace: 'other' }));
  });

  it('content with finalizers keeps the namespace until the finalizers are removed', async () => {
    const store = await setup();
    await store.create(CM, cm('held', {}, { namespace: 'team', finalizers: [HOLD] }));
    await store.delete(NAMESPACE, NS_KEY);
    await store.gcSettled();
    expect(await names(store, CM, 'team')).toEqual(['held']);
    expect((await store.get(CM, { namespace: 'team', name: 'held' })).metadata.deletionTimestamp).toEqual(
      expect.any(String),
    );
    expect((await store.get(NAMESPACE, NS_KEY)).metadata.deletionTimestamp).toEqual(expect.any(String));
    await store.patch(
      CM,
      { namespace: 'team', name: 'held' },
      { type: 'merge', patch: { metadata: { finalizers: null } } },
    );
    await store.gcSettled();
    await expect(store.get(NAMESPACE, NS_KEY)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("a Namespace's own finalizers keep it after it is empty; removing the last one while content remains does not remove it", async () => {
    const { store } = makeStore();
    await store.create(NAMESPACE, { metadata: { name: 'team', finalizers: [HOLD] } });
    await store.create(CM, cm('held', {}, { namespace: 'team', finalizers: [HOLD] }));
    await store.delete(NAMESPACE, NS_KEY);
    await store.gcSettled();
    await store.patch(NAMESPACE, NS_KEY, { type: 'merge', patch: { metadata: { finalizers: null } } });
    expect((await store.get(NAMESPACE, NS_KEY)).metadata.finalizers).toBeUndefined();
    await store.patch(
      CM,
      { namespace: 'team', name: 'held' },
      { type: 'merge', patch: { metadata: { finalizers: null } } },
    );
    await store.gcSettled();
    await expect(store.get(NAMESPACE, NS_KEY)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an empty namespace is removed soon after its delete', async () => {
    const { store } = makeStore();
    await store.create(NAMESPACE, { metadata: { name: 'empty' } });
    expect((await store.delete(NAMESPACE, { namespace: '', name: 'empty' })).status).toBe('pending');
    await store.gcSettled();
    await expect(store.get(NAMESPACE, { namespace: '', name: 'empty' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('without a served Namespace type, namespaces are free-form names', async () => {
    const { store } = makeStore();
    await store.unregisterType(NAMESPACE);
    await store.create(CM, cm('a', {}, { namespace: 'anything' }));
    expect(await names(store, CM, 'anything')).toEqual(['a']);
  });
});
