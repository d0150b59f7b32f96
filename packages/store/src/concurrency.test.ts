import { ConflictError, InvalidError, isConflict } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CM,
  type ConfigMap,
  cm,
  describeEvents,
  makeStore,
  Reader,
  WIDGET,
  type Widget,
  widget,
} from './testdata/fixtures.ts';

const KEY = { namespace: 'default', name: 'a' };

describe('optimistic concurrency', () => {
  it('an update with a stale resourceVersion is a ConflictError with the Kubernetes message, and changes nothing', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('a', { v: '1' }));
    const v2 = await store.update<ConfigMap>(CM, { ...v1, data: { v: '2' } });
    const error = await store.update(CM, { ...v1, data: { v: '3' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toBe(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(await store.get(CM, KEY)).toBe(v2);
  });

  it('an update without resourceVersion is unconditional unless the type requires one', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('a', { v: '1' }));
    await store.update<ConfigMap>(CM, { ...v1, data: { v: '2' } });
    const blind = await store.update<ConfigMap>(CM, { ...cm('a', { v: '3' }) });
    expect(blind.data).toEqual({ v: '3' });
    const w = await store.create<Widget>(WIDGET, widget('w'));
    const { resourceVersion: _rv, ...meta } = w.metadata;
    const error = (await store
      .update(WIDGET, { ...w, metadata: meta, spec: { size: 2 } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.message).toBe(
      'Widget.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    expect(error.causes[0]?.field).toBe('metadata.resourceVersion');
  });

  it('uid is immutable; a missing uid is filled from the stored object', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('a'));
    const error = (await store
      .update(CM, { ...v1, metadata: { ...v1.metadata, uid: 'other' } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.causes[0]).toMatchObject({
      field: 'metadata.uid',
      message: 'Invalid value: "other": field is immutable',
    });
    const { uid: _uid, ...meta } = v1.metadata;
    const v2 = await store.update<ConfigMap>(CM, { ...v1, metadata: meta, data: { v: '2' } });
    expect(v2.metadata.uid).toBe(v1.metadata.uid);
  });

  it('name and namespace are immutable under patch', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const rename = (await store
      .patch(CM, KEY, { type: 'merge', patch: { metadata: { name: 'b' } } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(rename).toBeInstanceOf(InvalidError);
    expect(rename.causes[0]?.field).toBe('metadata.name');
    const move = (await store
      .patch(CM, KEY, {
        type: 'json',
        patch: [{ op: 'replace', path: '/metadata/namespace', value: 'other' }],
      })
      .catch((e: unknown) => e)) as InvalidError;
    expect(move.causes[0]?.field).toBe('metadata.namespace');
  });

  it('creationTimestamp and deletionTimestamp are preserved whatever the client sends', async () => {
    const { store, clock } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('a', {}, { finalizers: ['example.com/hold'] }));
    await clock.advance(5_000);
    const marked = await store.delete<ConfigMap>(CM, KEY);
    const object = marked.status === 'pending' ? marked.object : v1;
    const v3 = await store.update<ConfigMap>(CM, {
      ...object,
      metadata: {
        ...object.metadata,
        creationTimestamp: '2000-01-01T00:00:00Z',
        deletionTimestamp: undefined,
      },
      data: { v: 'x' },
    } as unknown as ConfigMap);
    expect(v3.metadata.creationTimestamp).toBe(v1.metadata.creationTimestamp);
    expect(v3.metadata.deletionTimestamp).toBe('2024-01-01T00:00:05Z');
  });

  it('a write that changes nothing keeps the resourceVersion, bumps no revision and emits no event', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('a', { v: '1' }, { labels: { x: 'y' } }));
    const reader = new Reader(store, CM, { resourceVersion: v1.metadata.resourceVersion as string });
    const revision = store.revision;
    expect(await store.update(CM, v1)).toBe(v1);
    expect(await store.update(CM, JSON.parse(JSON.stringify(v1)) as ConfigMap)).toBe(v1);
    expect(await store.patch(CM, KEY, { type: 'merge', patch: { data: { v: '1' } } })).toBe(v1);
    expect(
      await store.patch(CM, KEY, { type: 'json', patch: [{ op: 'test', path: '/data/v', value: '1' }] }),
    ).toBe(v1);
    expect(store.revision).toBe(revision);
    expect(await reader.drain()).toEqual([]);
    await reader.close();
  });

  it('concurrent updates from one resourceVersion: exactly one wins', async () => {
    const { store } = makeStore();
    const base = await store.create<Widget>(WIDGET, widget('w', { size: 0 }));
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => store.update<Widget>(WIDGET, { ...base, spec: { size: i + 1 } })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(isConflict(r.reason)).toBe(true);
  });

  it('property: updates from random stale copies succeed exactly when their resourceVersion is current', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 30 }), async (picks) => {
        const { store } = makeStore();
        const seen: ConfigMap[] = [await store.create<ConfigMap>(CM, cm('a', { n: '0' }))];
        let current = seen[0] as ConfigMap;
        let lastRevision = store.revision;
        for (const [i, pick] of picks.entries()) {
          const base = seen[Math.max(0, seen.length - 1 - pick)] as ConfigMap;
          const fresh = base.metadata.resourceVersion === current.metadata.resourceVersion;
          try {
            const next = await store.update<ConfigMap>(CM, { ...base, data: { n: String(i + 1) } });
            expect(fresh).toBe(true);
            expect(Number(next.metadata.resourceVersion)).toBeGreaterThan(lastRevision);
            lastRevision = Number(next.metadata.resourceVersion);
            current = next;
            seen.push(next);
          } catch (error) {
            expect(fresh).toBe(false);
            expect(isConflict(error)).toBe(true);
          }
          expect(await store.get(CM, KEY)).toBe(current);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('writes to different objects get consecutive revisions in call order', async () => {
    const { store } = makeStore();
    const reader = new Reader(store, CM, { resourceVersion: String(store.revision) });
    await Promise.all(['a', 'b', 'c'].map((name) => store.create(CM, cm(name))));
    expect(describeEvents(await reader.drain())).toEqual(['ADDED a@2', 'ADDED b@3', 'ADDED c@4']);
    await reader.close();
  });
});
