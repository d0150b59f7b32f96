import {
  BackendError,
  BadRequestError,
  ConflictError,
  InvalidError,
  type Patch,
  UnsupportedError,
} from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CM, type ConfigMap, cm, makeStore, WIDGET, type Widget, widget } from './testdata/fixtures.ts';

const KEY = { namespace: 'default', name: 'a' };

describe('merge patch', () => {
  it('sets members, keeps the others, and null deletes', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', { x: '1', y: '2' }, { labels: { app: 'web' } }));
    const patched = await store.patch<ConfigMap>(CM, KEY, {
      type: 'merge',
      patch: { data: { y: null, z: '3' }, metadata: { labels: { tier: 'front' } } },
    });
    expect(patched.data).toEqual({ x: '1', z: '3' });
    expect(patched.metadata.labels).toEqual({ app: 'web', tier: 'front' });
  });

  it('a resourceVersion in the patch is a precondition; without one the patch is unconditional, even where updates need one', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('a', { size: 1 }));
    const v2 = await store.patch<Widget>(WIDGET, KEY, { type: 'merge', patch: { spec: { size: 2 } } });
    expect(v2.metadata.generation).toBe(2);
    await expect(
      store.patch(WIDGET, KEY, {
        type: 'merge',
        patch: { metadata: { resourceVersion: v1.metadata.resourceVersion }, spec: { size: 3 } },
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    const v3 = await store.patch<Widget>(WIDGET, KEY, {
      type: 'merge',
      patch: { metadata: { resourceVersion: v2.metadata.resourceVersion }, spec: { size: 3 } },
    });
    expect(v3.spec).toEqual({ size: 3 });
  });

  it('a patch whose result is not an object is a BadRequestError', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    await expect(store.patch(CM, KEY, { type: 'merge', patch: 'text' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });
});

describe('JSON patch', () => {
  it('applies add, remove, replace, move, copy and test with ~0/~1 escapes and -', async () => {
    const { store } = makeStore();
    await store.create(CM, {
      ...cm('a', { x: '1', y: '2' }, { labels: { 'example.com/app': 'web' } }),
      list: [1],
    } as ConfigMap);
    const patched = await store.patch<ConfigMap & { list: number[] }>(CM, KEY, {
      type: 'json',
      patch: [
        { op: 'test', path: '/data/x', value: '1' },
        { op: 'replace', path: '/metadata/labels/example.com~1app', value: 'db' },
        { op: 'add', path: '/data/t~0ilde', value: '~' },
        { op: 'move', from: '/data/y', path: '/data/moved' },
        { op: 'copy', from: '/data/x', path: '/data/copied' },
        { op: 'add', path: '/list/-', value: 2 },
        { op: 'remove', path: '/data/x' },
      ],
    });
    expect(patched.data).toEqual({ 't~ilde': '~', moved: '2', copied: '1' });
    expect(patched.metadata.labels).toEqual({ 'example.com/app': 'db' });
    expect(patched.list).toEqual([1, 2]);
  });

  it('a failing operation is an InvalidError and changes nothing; a malformed patch is a BadRequestError', async () => {
    const { store } = makeStore();
    const v1 = await store.create(CM, cm('a', { x: '1' }));
    await expect(
      store.patch(CM, KEY, {
        type: 'json',
        patch: [
          { op: 'replace', path: '/data/x', value: '2' },
          { op: 'test', path: '/data/x', value: 'nope' },
        ],
      }),
    ).rejects.toBeInstanceOf(InvalidError);
    await expect(
      store.patch(CM, KEY, { type: 'json', patch: [{ op: 'remove', path: '/data/missing' }] }),
    ).rejects.toBeInstanceOf(InvalidError);
    await expect(
      store.patch(CM, KEY, { type: 'json', patch: [{ op: 'jump', path: '/x' }] as never }),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(await store.get(CM, KEY)).toBe(v1);
  });
});

describe('other patch types', () => {
  it('strategic merge patch and server-side apply are UnsupportedErrors', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a'));
    for (const patch of [
      { type: 'strategic', patch: {} },
      { type: 'apply', patch: {} },
    ] as Patch[]) {
      await expect(store.patch(CM, KEY, patch)).rejects.toBeInstanceOf(UnsupportedError);
    }
    await expect(store.patch(CM, KEY, { type: 'yaml' } as never)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('a patch of a missing object is NotFoundError', async () => {
    const { store } = makeStore();
    await expect(store.patch(CM, KEY, { type: 'merge', patch: {} })).rejects.toThrow(
      'configmaps "a" not found',
    );
  });
});

describe('fuzzing patches', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  const pointer = fc
    .array(fc.constantFrom('metadata', 'data', 'name', 'labels', 'x', '0', '-', '~1', 'spec'), {
      maxLength: 4,
    })
    .map((parts) => (parts.length === 0 ? '' : `/${parts.join('/')}`));
  const op = fc.oneof(
    fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value: json }),
    fc.record({ op: fc.constant('remove'), path: pointer }),
    fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }),
    fc.record({ op: fc.string(), path: fc.anything() }),
  );
  const patch = fc.oneof(
    fc.record({
      type: fc.constant('merge' as const),
      patch: fc.oneof(json, fc.record({ metadata: json, data: json, spec: json })),
    }),
    fc.record({ type: fc.constant('json' as const), patch: fc.oneof(fc.array(op, { maxLength: 5 }), json) }),
  );

  it('random merge and JSON patches give typed errors or valid objects, never a crash or a corrupted store', async () => {
    const { store } = makeStore();
    await store.create(CM, cm('a', { x: '1' }, { labels: { app: 'web' } }));
    await fc.assert(
      fc.asyncProperty(patch, async (p) => {
        const before = await store.get<ConfigMap>(CM, KEY);
        try {
          const after = await store.patch<ConfigMap>(CM, KEY, p as Patch);
          expect(after.metadata.name).toBe('a');
          expect(after.metadata.uid).toBe(before.metadata.uid);
          expect(await store.get(CM, KEY)).toBe(after);
        } catch (error) {
          expect(error).toBeInstanceOf(BackendError);
          expect(await store.get(CM, KEY)).toBe(before);
        }
        const list = await store.list(CM);
        expect(list.items).toHaveLength(1);
      }),
      { numRuns: 400 },
    );
  });
});
