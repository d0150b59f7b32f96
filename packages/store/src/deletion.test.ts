import { ConflictError, InvalidError, NotFoundError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import type { Store } from './store.ts';
import {
  CLUSTER_WIDGET,
  CM,
  type ConfigMap,
  cm,
  describeEvents,
  makeStore,
  ownerRef,
  Reader,
  WIDGET,
  type Widget,
  widget,
} from './testdata/fixtures.ts';

const HOLD = 'example.com/hold';
const KEY = (name: string) => ({ namespace: 'default', name });

async function exists(store: Store, type: typeof CM, name: string): Promise<boolean> {
  return store.get(type, KEY(name)).then(
    () => true,
    (e: unknown) => {
      if (e instanceof NotFoundError) return false;
      throw e;
    },
  );
}

describe('delete and finalizers', () => {
  it('without finalizers the object is removed at once: status deleted, DELETED event', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const reader = new Reader(store, CM, { resourceVersion: String(store.revision) });
    expect(await store.delete(CM, KEY('a'))).toEqual({ status: 'deleted' });
    expect(await exists(store, CM, 'a')).toBe(false);
    expect(describeEvents(await reader.drain())).toEqual(['DELETED a@3']);
  });

  it('with finalizers it sets deletionTimestamp and deletionGracePeriodSeconds 0, keeps the object, and emits MODIFIED', async () => {
    const { store, clock } = makeStore();
    await store.create(CM, cm('a', {}, { finalizers: [HOLD] }));
    await clock.advance(61_000);
    const reader = new Reader(store, CM, { resourceVersion: String(store.revision) });
    const result = await store.delete<ConfigMap>(CM, KEY('a'));
    if (result.status !== 'pending') return expect.fail('expected a pending delete');
    expect(result.object.metadata).toMatchObject({
      deletionTimestamp: '2024-01-01T00:01:01Z',
      deletionGracePeriodSeconds: 0,
      finalizers: [HOLD],
    });
    expect(await store.get(CM, KEY('a'))).toBe(result.object);
    expect(describeEvents(await reader.drain())).toEqual(['MODIFIED a@3']);
  });

  it('a repeat delete of a terminating object returns it unchanged', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', {}, { finalizers: [HOLD] }));
    const first = await store.delete(CM, KEY('a'));
    const revision = store.revision;
    expect(await store.delete(CM, KEY('a'), { propagationPolicy: 'Foreground' })).toEqual(first);
    expect(store.revision).toBe(revision);
  });

  it('removing the last finalizer (update or patch) deletes the object and returns its final state', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', {}, { finalizers: [HOLD, 'example.com/two'] }));
    await store.delete(CM, KEY('a'));
    const reader = new Reader(store, CM, { resourceVersion: String(store.revision) });
    const marked = await store.get<ConfigMap>(CM, KEY('a'));
    const one = await store.update<ConfigMap>(CM, {
      ...marked,
      metadata: { ...marked.metadata, finalizers: [HOLD] },
    });
    const last = await store.patch<ConfigMap>(CM, KEY('a'), {
      type: 'merge',
      patch: { metadata: { finalizers: null } },
    });
    expect(last.metadata.finalizers).toBeUndefined();
    expect(Number(last.metadata.resourceVersion)).toBe(Number(one.metadata.resourceVersion) + 1);
    expect(await exists(store, CM, 'a')).toBe(false);
    expect(describeEvents(await reader.drain())).toEqual([
      `MODIFIED a@${one.metadata.resourceVersion}`,
      `DELETED a@${last.metadata.resourceVersion}`,
    ]);
  });

  it('no new finalizers may be added once deletionTimestamp is set', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', {}, { finalizers: [HOLD] }));
    await store.delete(CM, KEY('a'));
    const marked = await store.get<ConfigMap>(CM, KEY('a'));
    const error = (await store
      .update(CM, { ...marked, metadata: { ...marked.metadata, finalizers: [HOLD, 'example.com/new'] } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.causes[0]).toMatchObject({ field: 'metadata.finalizers', reason: 'FieldValueForbidden' });
    expect(error.causes[0]?.message).toContain(
      'no new finalizers can be added if the object is being deleted',
    );
  });

  it('preconditions on uid and resourceVersion are ConflictErrors with the Kubernetes message when they do not match', async () => {
    const { store } = makeStore();
    const a = await store.create(CM, cm('a'));
    const uid = await store.delete(CM, KEY('a'), { preconditions: { uid: 'nope' } }).catch((e: unknown) => e);
    expect(uid).toBeInstanceOf(ConflictError);
    expect((uid as Error).message).toBe(
      `Operation cannot be fulfilled on configmaps "a": Precondition failed: UID in precondition: nope, UID in object meta: ${a.metadata.uid}`,
    );
    await expect(
      store.delete(CM, KEY('a'), { preconditions: { resourceVersion: '1' } }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(
      await store.delete(CM, KEY('a'), {
        preconditions: {
          uid: a.metadata.uid as string,
          resourceVersion: a.metadata.resourceVersion as string,
        },
      }),
    ).toEqual({ status: 'deleted' });
  });

  it('an unknown propagation policy is an InvalidError', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    await expect(
      store.delete(CM, KEY('a'), { propagationPolicy: 'Sideways' as never }),
    ).rejects.toBeInstanceOf(InvalidError);
  });
});

describe('propagation policies and the garbage collector', () => {
  it('Background: dependents whose every owner is gone are deleted, asynchronously', async () => {
    const { store } = makeStore();
    const owner = await store.create<Widget>(WIDGET, widget('owner'));
    await store.create(CM, cm('dep', {}, { ownerReferences: [ownerRef(owner)] }));
    await store.create(CM, cm('bystander'));
    expect(await store.delete(WIDGET, KEY('owner'))).toEqual({ status: 'deleted' });
    expect(await exists(store, CM, 'dep')).toBe(true);
    await store.gcSettled();
    expect(await exists(store, CM, 'dep')).toBe(false);
    expect(await exists(store, CM, 'bystander')).toBe(true);
  });

  it('Background cascades through chains of owners', async () => {
    const { store } = makeStore();
    const root = await store.create<Widget>(WIDGET, widget('root'));
    const mid = await store.create<Widget>(WIDGET, widget('mid', {}, { ownerReferences: [ownerRef(root)] }));
    await store.create(CM, cm('leaf', {}, { ownerReferences: [ownerRef(mid)] }));
    await store.delete(WIDGET, KEY('root'));
    await store.gcSettled();
    expect(await exists(store, WIDGET, 'mid')).toBe(false);
    expect(await exists(store, CM, 'leaf')).toBe(false);
  });

  it('a dependent with another live owner keeps living and loses only the dangling reference', async () => {
    const { store } = makeStore();
    const a = await store.create<Widget>(WIDGET, widget('a'));
    const b = await store.create<Widget>(WIDGET, widget('b'));
    await store.create(
      CM,
      cm('shared', {}, { ownerReferences: [ownerRef(a, { controller: true }), ownerRef(b)] }),
    );
    await store.delete(WIDGET, KEY('a'));
    await store.gcSettled();
    const shared = await store.get(CM, KEY('shared'));
    expect(shared.metadata.ownerReferences).toEqual([ownerRef(b)]);
  });

  it('a dependent created with an owner that no longer exists is collected; owners of unserved kinds are left alone', async () => {
    const { store } = makeStore();
    const stale = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'gone', uid: 'no-such-uid' };
    const foreign = { apiVersion: 'other.io/v1', kind: 'Elsewhere', name: 'x', uid: 'foreign-uid' };
    await store.create(CM, cm('orphaned', {}, { ownerReferences: [stale] }));
    await store.create(CM, cm('foreign', {}, { ownerReferences: [foreign] }));
    await store.gcSettled();
    expect(await exists(store, CM, 'orphaned')).toBe(false);
    expect(await exists(store, CM, 'foreign')).toBe(true);
  });

  it('an owner in another namespace does not count (owner references are namespace-local)', async () => {
    const { store } = makeStore();
    const owner = await store.create<Widget>(WIDGET, widget('owner', {}, { namespace: 'other' }));
    await store.create(CM, cm('dep', {}, { ownerReferences: [ownerRef(owner)] }));
    await store.gcSettled();
    expect(await exists(store, CM, 'dep')).toBe(false);
  });

  it('a cluster-scoped owner can own namespaced dependents', async () => {
    const { store } = makeStore();
    const owner = await store.create(CLUSTER_WIDGET, { metadata: { name: 'cw' } });
    await store.create(CM, cm('dep', {}, { ownerReferences: [ownerRef(owner)] }));
    await store.gcSettled();
    expect(await exists(store, CM, 'dep')).toBe(true);
    await store.delete(CLUSTER_WIDGET, { namespace: '', name: 'cw' });
    await store.gcSettled();
    expect(await exists(store, CM, 'dep')).toBe(false);
  });

  it('Foreground: the owner keeps foregroundDeletion until blocking dependents are gone, then goes', async () => {
    const { store } = makeStore();
    const owner = await store.create<Widget>(WIDGET, widget('owner'));
    await store.create(
      CM,
      cm(
        'blocking',
        {},
        { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })], finalizers: [HOLD] },
      ),
    );
    await store.create(CM, cm('plain', {}, { ownerReferences: [ownerRef(owner)], finalizers: [HOLD] }));
    const result = await store.delete<Widget>(WIDGET, KEY('owner'), { propagationPolicy: 'Foreground' });
    if (result.status !== 'pending') return expect.fail('expected pending');
    expect(result.object.metadata.finalizers).toEqual(['foregroundDeletion']);
    await store.gcSettled();
    for (const name of ['blocking', 'plain']) {
      expect((await store.get(CM, KEY(name))).metadata.deletionTimestamp).toEqual(expect.any(String));
    }
    expect((await store.get(WIDGET, KEY('owner'))).metadata.finalizers).toEqual(['foregroundDeletion']);
    await store.patch(CM, KEY('plain'), { type: 'merge', patch: { metadata: { finalizers: null } } });
    await store.gcSettled();
    expect(await exists(store, WIDGET, 'owner')).toBe(true);
    await store.patch(CM, KEY('blocking'), { type: 'merge', patch: { metadata: { finalizers: null } } });
    await store.gcSettled();
    expect(await exists(store, CM, 'blocking')).toBe(false);
    expect(await exists(store, WIDGET, 'owner')).toBe(false);
  });

  it('Foreground deletes a dependent that owns objects in the foreground too, bottom-up', async () => {
    const { store } = makeStore();
    const root = await store.create<Widget>(WIDGET, widget('root'));
    const mid = await store.create<Widget>(
      WIDGET,
      widget('mid', {}, { ownerReferences: [ownerRef(root, { blockOwnerDeletion: true })] }),
    );
    await store.create(
      CM,
      cm('leaf', {}, { ownerReferences: [ownerRef(mid, { blockOwnerDeletion: true })], finalizers: [HOLD] }),
    );
    await store.delete(WIDGET, KEY('root'), { propagationPolicy: 'Foreground' });
    await store.gcSettled();
    expect((await store.get(WIDGET, KEY('mid'))).metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(await exists(store, WIDGET, 'root')).toBe(true);
    await store.patch(CM, KEY('leaf'), { type: 'merge', patch: { metadata: { finalizers: null } } });
    await store.gcSettled();
    expect(await exists(store, WIDGET, 'mid')).toBe(false);
    expect(await exists(store, WIDGET, 'root')).toBe(false);
  });

  it('Orphan: dependents lose the owner reference and stay; the owner then goes', async () => {
    const { store } = makeStore();
    const owner = await store.create<Widget>(WIDGET, widget('owner'));
    const other = await store.create<Widget>(WIDGET, widget('other'));
    await store.create(
      CM,
      cm('dep', { keep: 'me' }, { ownerReferences: [ownerRef(owner), ownerRef(other)] }),
    );
    const result = await store.delete<Widget>(WIDGET, KEY('owner'), { propagationPolicy: 'Orphan' });
    expect(result.status === 'pending' && result.object.metadata.finalizers).toEqual(['orphan']);
    await store.gcSettled();
    expect(await exists(store, WIDGET, 'owner')).toBe(false);
    const dep = await store.get<ConfigMap>(CM, KEY('dep'));
    expect(dep.metadata.ownerReferences).toEqual([ownerRef(other)]);
    expect(dep.metadata.deletionTimestamp).toBeUndefined();
  });

  it('Orphan waits for the owner’s other finalizers', async () => {
    const { store } = makeStore();
    const owner = await store.create<Widget>(WIDGET, widget('owner', {}, { finalizers: [HOLD] }));
    await store.create(CM, cm('dep', {}, { ownerReferences: [ownerRef(owner)] }));
    await store.delete(WIDGET, KEY('owner'), { propagationPolicy: 'Orphan' });
    await store.gcSettled();
    expect((await store.get(WIDGET, KEY('owner'))).metadata.finalizers).toEqual([HOLD]);
    expect((await store.get(CM, KEY('dep'))).metadata.ownerReferences).toBeUndefined();
  });

  it('the collector runs deterministically: the same writes give the same revisions and events', async () => {
    const run = async (): Promise<string[]> => {
      const { store } = makeStore();
      const owner = await store.create<Widget>(WIDGET, widget('owner'));
      for (const name of ['d1', 'd2', 'd3'])
        await store.create(CM, cm(name, {}, { ownerReferences: [ownerRef(owner)] }));
      const reader = new Reader(store, CM, { resourceVersion: String(store.revision) });
      await store.delete(WIDGET, KEY('owner'), { propagationPolicy: 'Foreground' });
      await store.gcSettled();
      return describeEvents(await reader.drain());
    };
    const first = await run();
    expect(first).toEqual(['DELETED d1@7', 'DELETED d2@8', 'DELETED d3@9']);
    expect(await run()).toEqual(first);
  });
});
