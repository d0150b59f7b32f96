import { describe, expect, it } from 'vitest';
import { CM, type ConfigMap, cm, makeStore, WIDGET, type Widget, widget } from './testdata/fixtures.ts';

const KEY = { namespace: 'default', name: 'w' };
const GADGET = { group: 'example.com', version: 'v1', kind: 'Gadget', plural: 'gadgets', namespaced: true };

describe('generation', () => {
  it('starts at 1 and rises by one only when something outside metadata and status changes', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w', { size: 1 }));
    expect(v1.metadata.generation).toBe(1);
    const labels = await store.update<Widget>(WIDGET, {
      ...v1,
      metadata: { ...v1.metadata, labels: { a: 'b' } },
    });
    expect(labels.metadata.generation).toBe(1);
    const spec = await store.update<Widget>(WIDGET, { ...labels, spec: { size: 2 } });
    expect(spec.metadata.generation).toBe(2);
    const topLevel = await store.update<Widget>(WIDGET, { ...spec, extra: true } as Widget);
    expect(topLevel.metadata.generation).toBe(3);
  });

  it('a client cannot set generation: create forces 1, update keeps the stored value', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w', { size: 1 }, { generation: 42 }));
    expect(v1.metadata.generation).toBe(1);
    const v2 = await store.update<Widget>(WIDGET, {
      ...v1,
      metadata: { ...v1.metadata, generation: 42 },
      spec: { size: 5 },
    });
    expect(v2.metadata.generation).toBe(2);
  });

  it('status changes never bump generation, even without a status subresource', async () => {
    const { store } = makeStore();
    store.registerType(GADGET);
    const v1 = await store.create<Widget>(GADGET, {
      metadata: { name: 'g', namespace: 'default' },
      spec: {},
    });
    const v2 = await store.update<Widget>(GADGET, { ...v1, status: { phase: 'Ready' } });
    expect(v2.status).toEqual({ phase: 'Ready' });
    expect(v2.metadata.generation).toBe(1);
  });

  it('is absent for types with generation: false, even if the client sends one', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('c', { a: '1' }, { generation: 3 }));
    expect(v1.metadata.generation).toBeUndefined();
    const v2 = await store.update<ConfigMap>(CM, { ...v1, data: { a: '2' } });
    expect(v2.metadata.generation).toBeUndefined();
  });

  it('setting deletionTimestamp bumps generation when it is tracked', async () => {
    const { store } = makeStore();
    await store.create<Widget>(WIDGET, widget('w', { size: 1 }, { finalizers: ['example.com/hold'] }));
    const result = await store.delete<Widget>(WIDGET, KEY);
    expect(result.status === 'pending' && result.object.metadata.generation).toBe(2);
    await store.create(CM, cm('c', {}, { finalizers: ['example.com/hold'] }));
    const cmResult = await store.delete(CM, { namespace: 'default', name: 'c' });
    expect(cmResult.status === 'pending' && cmResult.object.metadata.generation).toBeUndefined();
  });
});

describe('status subresource', () => {
  it('create drops .status', async () => {
    const { store } = makeStore();
    const created = await store.create<Widget>(WIDGET, { ...widget('w'), status: { phase: 'Forged' } });
    expect(created.status).toBeUndefined();
  });

  it('update keeps the stored status and an update that only changes status is a no-op', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w'));
    const v2 = await store.updateStatus<Widget>(WIDGET, { ...v1, status: { phase: 'Ready' } });
    const v3 = await store.update<Widget>(WIDGET, { ...v2, spec: { size: 2 }, status: { phase: 'Forged' } });
    expect(v3.status).toEqual({ phase: 'Ready' });
    const v4 = await store.update<Widget>(WIDGET, { ...v3, status: undefined } as unknown as Widget);
    expect(v4).toBe(v3);
  });

  it('updateStatus changes only .status: spec, labels and finalizers sent along are ignored', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w', { size: 1 }, { labels: { app: 'web' } }));
    const v2 = await store.updateStatus<Widget>(WIDGET, {
      ...v1,
      metadata: { ...v1.metadata, labels: { app: 'forged' }, finalizers: ['example.com/x'] },
      spec: { size: 9 },
      status: { phase: 'Ready' },
    });
    expect(v2.spec).toEqual({ size: 1 });
    expect(v2.metadata.labels).toEqual({ app: 'web' });
    expect(v2.metadata.finalizers).toBeUndefined();
    expect(v2.status).toEqual({ phase: 'Ready' });
    expect(v2.metadata.generation).toBe(1);
  });

  it('updateStatus without .status removes the status', async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w'));
    const v2 = await store.updateStatus<Widget>(WIDGET, { ...v1, status: { phase: 'Ready' } });
    const v3 = await store.updateStatus<Widget>(WIDGET, { ...v2, status: undefined } as unknown as Widget);
    expect(v3.status).toBeUndefined();
  });

  it("patch with subresource 'status' changes only .status; a main patch of .status is ignored", async () => {
    const { store } = makeStore();
    const v1 = await store.create<Widget>(WIDGET, widget('w'));
    const main = await store.patch<Widget>(WIDGET, KEY, { type: 'merge', patch: { status: { phase: 'X' } } });
    expect(main).toBe(v1);
    const status = await store.patch<Widget>(
      WIDGET,
      KEY,
      { type: 'merge', patch: { status: { phase: 'Ready' }, spec: { size: 7 } } },
      { subresource: 'status' },
    );
    expect(status.status).toEqual({ phase: 'Ready' });
    expect(status.spec).toEqual({ size: 1 });
  });

  it('without a status subresource, updateStatus behaves like update', async () => {
    const { store } = makeStore();
    const v1 = await store.create<ConfigMap>(CM, cm('c', { a: '1' }));
    const v2 = await store.updateStatus<ConfigMap>(CM, { ...v1, data: { a: '2' } });
    expect(v2.data).toEqual({ a: '2' });
  });
});
