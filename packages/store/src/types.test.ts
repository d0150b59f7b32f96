import { type KubeObject, NotFoundError, OptionsError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { TypeConflictError } from './errors.ts';
import { CM, cm, describeEvents, makeStore, Reader, WIDGET, widget } from './testdata/fixtures.ts';

const GADGET = { group: 'example.com', version: 'v1', kind: 'Gadget', plural: 'gadgets', namespaced: true };

describe('runtime type registration', () => {
  it('registerType serves a new type at runtime and resolveType finds it by apiVersion and kind', async () => {
    const { store } = makeStore();
    expect(store.resolveType('example.com/v1', 'Gadget')).toBeUndefined();
    const registered = store.registerType(GADGET);
    expect(registered).toMatchObject({ ...GADGET, singular: 'gadget' });
    expect(store.resolveType('example.com/v1', 'Gadget')).toBe(registered);
    expect(store.types().map((t) => t.kind)).toContain('Gadget');
    const created = await store.create<KubeObject>(GADGET, { metadata: { name: 'g', namespace: 'default' } });
    expect(created.apiVersion).toBe('example.com/v1');
  });

  it('registering the same type again keeps its objects and takes the new definition', async () => {
    const { store } = makeStore();
    store.registerType(GADGET);
    const created = await store.create(GADGET, {
      metadata: { name: 'g', namespace: 'default' },
      status: { a: 1 },
    });
    expect((created as { status?: unknown }).status).toEqual({ a: 1 });
    store.registerType({ ...GADGET, statusSubresource: true });
    expect(await store.get(GADGET, { namespace: 'default', name: 'g' })).toBe(created);
    const again = await store.create(GADGET, {
      metadata: { name: 'h', namespace: 'default' },
      status: { a: 1 },
    });
    expect((again as { status?: unknown }).status).toBeUndefined();
  });

  it('a type clashing with a served apiVersion + kind is a TypeConflictError; a malformed one an OptionsError', () => {
    const { store } = makeStore();
    expect(() => store.registerType({ ...WIDGET, plural: 'widgetz' })).toThrow(TypeConflictError);
    expect(() => store.registerType({ ...WIDGET, kind: 'Other' })).toThrow(TypeConflictError);
    expect(() => store.registerType({ ...GADGET, version: 'V1!' })).toThrow(OptionsError);
  });

  it('unregisterType deletes every object (DELETED to watchers, each at its own revision), then ends the watch', async () => {
    const { store } = makeStore();
    await store.create(WIDGET, widget('a', { size: 1 }, { finalizers: ['example.com/hold'] }));
    await store.create(WIDGET, widget('b'));
    await store.create(CM, cm('keep'));
    const reader = new Reader(store, WIDGET, { resourceVersion: String(store.revision) });
    const before = store.revision;
    await store.unregisterType(WIDGET);
    expect(describeEvents(await reader.drain())).toEqual([
      `DELETED a@${before + 1}`,
      `DELETED b@${before + 2}`,
    ]);
    expect(await reader.poll()).toEqual({ done: true, value: undefined });
    await expect(store.get(WIDGET, { namespace: 'default', name: 'b' })).rejects.toThrow(
      'the server could not find the requested resource',
    );
    expect(store.resolveType('example.com/v1', 'Widget')).toBeUndefined();
    expect((await store.list(CM)).items).toHaveLength(1);
  });

  it('unregisterType also ends a watch still waiting for a future resourceVersion', async () => {
    const { store } = makeStore();
    const waiting = new Reader(store, WIDGET, { resourceVersion: String(store.revision + 100) });
    expect(await waiting.poll()).toBe('pending');
    await store.unregisterType(WIDGET);
    expect(await waiting.poll()).toEqual({ done: true, value: undefined });
  });

  it('a type registered again after unregisterType starts empty', async () => {
    const { store } = makeStore();
    await store.create(WIDGET, widget('a'));
    await store.unregisterType(WIDGET);
    store.registerType(WIDGET);
    expect((await store.list(WIDGET)).items).toEqual([]);
    await expect(store.get(WIDGET, { namespace: 'default', name: 'a' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('the revision counter is shared by all types', async () => {
    const { store } = makeStore();
    const a = await store.create(CM, cm('a'));
    const w = await store.create(WIDGET, widget('w'));
    const b = await store.create(CM, cm('b'));
    expect([a, w, b].map((o) => Number(o.metadata.resourceVersion))).toEqual([2, 3, 4]);
    expect(store.revision).toBe(4);
  });
});
