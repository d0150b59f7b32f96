import {
  AbortedError,
  AlreadyExistsError,
  BadRequestError,
  InternalError,
  InvalidError,
  type KubeObject,
  NotFoundError,
  OptionsError,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { Store } from './store.ts';
import {
  CLUSTER_WIDGET,
  CM,
  type ConfigMap,
  cm,
  makeStore,
  WIDGET,
  type Widget,
  widget,
} from './testdata/fixtures.ts';

const KEY = { namespace: 'default', name: 'a' };

describe('create and get', () => {
  it('create sets uid, creationTimestamp (RFC 3339 seconds from the clock) and resourceVersion, and wipes client values', async () => {
    const { store, clock } = makeStore();
    await clock.advance(1_500);
    const created = await store.create<ConfigMap>(
      CM,
      cm(
        'a',
        { k: 'v' },
        {
          uid: 'mine',
          creationTimestamp: '2001-01-01T00:00:00Z',
          deletionTimestamp: '2001-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 30,
        },
      ),
    );
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toBe('2024-01-01T00:00:01Z');
    expect(created.metadata.deletionTimestamp).toBeUndefined();
    expect(created.metadata.deletionGracePeriodSeconds).toBeUndefined();
    expect(created.metadata.resourceVersion).toBe(String(store.revision));
    expect(await store.get(CM, KEY)).toBe(created);
  });

  it('fills in apiVersion and kind and rejects a mismatched one with BadRequestError', async () => {
    const { store } = makeStore();
    const created = await store.create(CM, { metadata: { name: 'a', namespace: 'default' } });
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    await expect(store.create(CM, { ...cm('b'), apiVersion: 'v2' })).rejects.toThrow(
      'the API version in the data (v2) does not match the expected API version (v1)',
    );
    await expect(store.create(CM, { ...cm('b'), kind: 'Secret' })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('a resourceVersion in a create body is an InternalError, as in kube-apiserver', async () => {
    const { store } = makeStore();
    const error = await store.create(CM, cm('a', {}, { resourceVersion: '5' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalError);
    expect((error as Error).message).toBe('resourceVersion should not be set on objects to be created');
  });

  it('create of an existing name is AlreadyExistsError with the Kubernetes message', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    const error = await store.create(CM, cm('a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect((error as Error).message).toBe('configmaps "a" already exists');
  });

  it('create of a name that is being deleted says "object is being deleted"', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', {}, { finalizers: ['example.com/hold'] }));
    await store.delete(CM, KEY);
    await expect(store.create(CM, cm('a'))).rejects.toThrow(
      'object is being deleted: configmaps "a" already exists',
    );
  });

  it('get of a missing object is NotFoundError `configmaps "x" not found` with details', async () => {
    const { store } = makeStore();
    const error = (await store
      .get(WIDGET, { namespace: 'default', name: 'x' })
      .catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('widgets.example.com "x" not found');
    expect(error.details).toEqual({ name: 'x', group: 'example.com', kind: 'widgets' });
  });

  it('without name and generateName create is InvalidError with a cause on metadata.name', async () => {
    const { store } = makeStore();
    const error = (await store
      .create(CM, { metadata: { namespace: 'default' } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.message).toBe(
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
    expect(error.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      },
    ]);
  });

  it.each([
    ['Upper', 'a lowercase RFC 1123 subdomain'],
    ['-lead', 'a lowercase RFC 1123 subdomain'],
    ['under_score', 'a lowercase RFC 1123 subdomain'],
    ['a'.repeat(254), 'must be no more than 253 characters'],
  ])('the name %j is not a DNS-1123 subdomain: InvalidError on metadata.name', async (name, detail) => {
    const { store } = makeStore();
    const error = (await store.create(CM, cm(name)).catch((e: unknown) => e)) as InvalidError;
    expect(error).toBeInstanceOf(InvalidError);
    expect(error.causes[0]?.field).toBe('metadata.name');
    expect(error.causes[0]?.message).toContain(detail);
  });

  it('a 253-character dotted name is valid', async () => {
    const { store } = makeStore();
    const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(name).toHaveLength(253);
    expect((await store.create(CM, cm(name))).metadata.name).toBe(name);
  });

  it('a namespaced type requires a namespace; a cluster-scoped type rejects one with BadRequestError', async () => {
    const { store } = makeStore();
    const error = (await store
      .create(CM, { metadata: { name: 'a' } })
      .catch((e: unknown) => e)) as InvalidError;
    expect(error.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'metadata.namespace' },
    ]);
    await expect(
      store.create(CLUSTER_WIDGET, { metadata: { name: 'c', namespace: 'default' } }),
    ).rejects.toBeInstanceOf(BadRequestError);
    const cluster = await store.create(CLUSTER_WIDGET, { metadata: { name: 'c' } });
    expect(await store.get(CLUSTER_WIDGET, { namespace: '', name: 'c' })).toBe(cluster);
  });

  it('invalid labels, finalizers and owner references are InvalidErrors naming the field', async () => {
    const { store } = makeStore();
    const causes = async (meta: Record<string, unknown>): Promise<string[]> => {
      const error = (await store.create(CM, cm('a', {}, meta)).catch((e: unknown) => e)) as InvalidError;
      expect(error).toBeInstanceOf(InvalidError);
      return error.causes.map((c) => c.field);
    };
    expect(await causes({ labels: { 'bad key!': 'v' } })).toEqual(['metadata.labels']);
    expect(await causes({ labels: { k: 'bad value!' } })).toEqual(['metadata.labels']);
    expect(await causes({ finalizers: ['ok.io/x', 'bad finalizer'] })).toEqual(['metadata.finalizers[1]']);
    expect(await causes({ ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: '' }] })).toEqual([
      'metadata.ownerReferences[0].uid',
    ]);
  });

  it('mistyped metadata fields are BadRequestErrors, never crashes', async () => {
    const { store } = makeStore();
    for (const metadata of [
      { name: 5 },
      { name: 'a', labels: { k: 1 } },
      { name: 'a', finalizers: 'x' },
      'meta',
    ]) {
      await expect(store.create(CM, { metadata } as never)).rejects.toBeInstanceOf(BadRequestError);
    }
    await expect(store.create(CM, null as never)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('generateName appends 5 characters from the apimachinery alphabet', async () => {
    const { store } = makeStore();
    const made = await store.create<KubeObject>(CM, {
      metadata: { generateName: 'web-', namespace: 'default' },
    });
    expect(made.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(made.metadata.generateName).toBe('web-');
  });

  it('generateName retries when the generated name is taken', async () => {
    const { store } = makeStore({ clock: new VirtualClock({ seed: 7 }) });
    const first = await store.create<KubeObject>(CM, {
      metadata: { generateName: 'x-', namespace: 'default' },
    });
    // A second store with the same seed generates the same first name: plant it, then create.
    const again = makeStore({ clock: new VirtualClock({ seed: 7 }) }).store;
    await again.create(CM, cm(first.metadata.name as string));
    const second = await again.create<KubeObject>(CM, {
      metadata: { generateName: 'x-', namespace: 'default' },
    });
    expect(second.metadata.name).not.toBe(first.metadata.name);
    expect(second.metadata.name).toMatch(/^x-/);
  });

  it('an unregistered type is NotFoundError `the server could not find the requested resource`', async () => {
    const { store } = makeStore();
    const ghost = { ...WIDGET, plural: 'ghosts', kind: 'Ghost' };
    for (const call of [
      () => store.get(ghost, KEY),
      () => store.list(ghost),
      () => store.create(ghost, widget('a')),
      () => store.delete(ghost, KEY),
    ]) {
      await expect(call()).rejects.toThrow(
        new NotFoundError('the server could not find the requested resource'),
      );
    }
  });

  it('an aborted signal rejects a write with AbortedError before anything is written', async () => {
    const { store } = makeStore();
    const before = store.revision;
    const signal = AbortSignal.abort();
    await expect(store.create(CM, cm('a'), { signal })).rejects.toBeInstanceOf(AbortedError);
    expect(store.revision).toBe(before);
  });

  it('invalid options are OptionsErrors at construction', () => {
    expect(() => new Store({ historyWindowMs: -1 })).toThrow(OptionsError);
    expect(() => new Store({ maxWatcherBuffer: 0 })).toThrow(OptionsError);
    expect(() => new Store({ fsync: 'sometimes' as never })).toThrow(OptionsError);
    expect(() => new Store({ types: [{ ...CM, plural: 'Bad Plural' }] })).toThrow(OptionsError);
  });
});

describe('returned objects', () => {
  it('are deep-frozen: mutating them throws and never changes the store', async () => {
    const { store } = makeStore();
    const created = await store.create<ConfigMap>(CM, cm('a', { k: 'v' }, { labels: { app: 'web' } }));
    expect(() => {
      (created.data as Record<string, string>).k = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (created.metadata.labels as Record<string, string>).app = 'changed';
    }).toThrow(TypeError);
    const listed = (await store.list<ConfigMap>(CM)).items[0] as ConfigMap;
    expect(() => {
      (listed.metadata as { name: string }).name = 'x';
    }).toThrow(TypeError);
    expect((await store.get<ConfigMap>(CM, KEY)).data).toEqual({ k: 'v' });
  });

  it('the object passed in is neither modified nor retained', async () => {
    const { store } = makeStore();
    const input = cm('a', { k: 'v' });
    const snapshot = structuredClone(input);
    await store.create(CM, input);
    expect(input).toEqual(snapshot);
    (input.data as Record<string, string>).k = 'changed';
    expect((await store.get<ConfigMap>(CM, KEY)).data).toEqual({ k: 'v' });
  });
});

describe('dryRun', () => {
  it('create, update, patch and delete with dryRun validate and return the result without writing', async () => {
    const { store } = makeStore();
    const dry = await store.create<Widget>(WIDGET, widget('a'), { dryRun: true });
    expect(dry.metadata.uid).toEqual(expect.any(String));
    expect(dry.metadata.generation).toBe(1);
    await expect(store.get(WIDGET, KEY)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.create(CM, cm('Bad'), { dryRun: true })).rejects.toBeInstanceOf(InvalidError);
    const real = await store.create<Widget>(WIDGET, widget('a'));
    const revision = store.revision;
    const updated = await store.update<Widget>(WIDGET, { ...real, spec: { size: 9 } }, { dryRun: true });
    expect(updated.metadata.generation).toBe(2);
    const patched = await store.patch<Widget>(
      WIDGET,
      KEY,
      { type: 'merge', patch: { spec: { size: 3 } } },
      { dryRun: true },
    );
    expect(patched.spec).toEqual({ size: 3 });
    expect(await store.delete(WIDGET, KEY, { dryRun: true })).toEqual({ status: 'deleted' });
    expect(store.revision).toBe(revision);
    expect(await store.get(WIDGET, KEY)).toBe(real);
  });
});
