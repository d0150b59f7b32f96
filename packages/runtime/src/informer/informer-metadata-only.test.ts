import { describe, expect, it } from 'vitest';
import type { Backend, ListOptions, WatchOptions } from '../backend/index.ts';
import type { PartialObjectMetadata } from '../object/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { Informer, InformerRegistry } from './index.ts';
import { type ConfigMap, configMap, configMaps, EventReplay, startInformer } from './test-harness.ts';
import { FakeBackend, settle } from './testing/index.ts';

const three = [
  configMap('a', { data: { big: 'x' } }),
  configMap('b', { labels: { app: 'web' } }),
  configMap('c', { namespace: 'other' }),
];

/** Only apiVersion, kind (the kind's) and metadata. */
function expectMetadataOnly(objects: readonly object[]): void {
  for (const object of objects) {
    expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    expect(object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
  }
}

describe('Informer with metadataOnly', () => {
  for (const initialList of ['paginated', 'watch-list'] as const) {
    it(`asks every ${initialList} list and watch for metadata only and caches only metadata`, async () => {
      const h = await startInformer(three, { metadataOnly: true, initialList });
      for (const call of [...h.backend.listCalls, ...h.backend.watchCalls])
        expect(call.metadataOnly).toBe(true);
      expect(h.backend.watchCalls.length).toBeGreaterThan(0);
      expect(h.informer.name).toBe('configmaps:metadata');
      const cached = h.cacheObjects();
      expect(cached.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
      expectMetadataOnly(cached);
      expect(cached.map((o) => o.metadata)).toEqual(h.backendObjects().map((o) => o.metadata));
      await h.stop();
    });
  }

  it('tells listeners of creates, updates and deletes with metadata only', async () => {
    const h = await startInformer([configMap('a')], { metadataOnly: true });
    h.replay.clear();
    h.backend.set(configMaps, configMap('a', { data: { v: '1' }, labels: { changed: 'yes' } }));
    h.backend.set(configMaps, configMap('n', { data: { v: '2' } }));
    h.backend.remove(configMaps, { namespace: 'default', name: 'a' });
    await settle();
    expect(h.replay.events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['update', 'a'],
      ['create', 'n'],
      ['delete', 'a'],
    ]);
    const update = h.replay.events[0];
    expect(update?.type === 'update' && update.object.metadata.labels).toEqual({ changed: 'yes' });
    expectMetadataOnly(
      h.replay.events.flatMap((e) => (e.type === 'update' ? [e.oldObject, e.object] : [e.object])),
    );
    expect(h.replay.violations).toEqual([]);
    await h.stop();
  });

  it('projects what a backend that ignores metadataOnly sends: the cache never holds a body', async () => {
    const clock = new VirtualClock();
    const fake = new FakeBackend({ clock });
    for (const object of three) fake.set(configMaps, object);
    const full = (options: ListOptions | WatchOptions | undefined) => ({ ...options, metadataOnly: false });
    const ignoring = {
      name: 'ignoring',
      list: (type, options) => fake.list(type, full(options)),
      watch: (type, options) => fake.watch(type, full(options)),
    } as Pick<Backend, 'name' | 'list' | 'watch'> as Backend;
    const informer = new Informer<PartialObjectMetadata>({
      backend: ignoring,
      type: configMaps,
      clock,
      metadataOnly: true,
    });
    const replay = new EventReplay<PartialObjectMetadata>();
    informer.subscribe(replay.listener);
    const controller = new AbortController();
    const run = informer.start(controller.signal);
    await informer.waitForSync(controller.signal);
    fake.set(configMaps, configMap('d', { data: { big: 'y' } }));
    await settle();
    expectMetadataOnly(informer.cache.list());
    expect(informer.cache.size).toBe(4);
    expectMetadataOnly(replay.events.map((e) => e.object));
    controller.abort();
    await run;
  });

  it('holds what siblings repeat once: one frozen ownerReferences, labels and annotations for the objects of one owner', async () => {
    const owned = (name: string, owner: string): ConfigMap => {
      const base = configMap(name, { labels: { app: 'web', tier: 'front' } });
      return {
        ...base,
        metadata: {
          ...base.metadata,
          annotations: { note: 'from the template' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `${owner}-uid` }],
        },
      };
    };
    for (const initialList of ['paginated', 'watch-list'] as const) {
      const h = await startInformer([owned('a', 'rs1'), owned('b', 'rs1'), owned('c', 'rs2')], {
        metadataOnly: true,
        initialList,
      });
      h.backend.set(configMaps, owned('d', 'rs1'));
      await settle();
      const [a, b, c, d] = h.cacheObjects().map((o) => o.metadata);
      expect(h.cacheObjects().map((o) => o.metadata)).toEqual(h.backendObjects().map((o) => o.metadata));
      for (const sibling of [b, d]) {
        expect(sibling?.ownerReferences).toBe(a?.ownerReferences);
        expect(sibling?.labels).toBe(a?.labels);
        expect(sibling?.annotations).toBe(a?.annotations);
      }
      expect(c?.ownerReferences).not.toBe(a?.ownerReferences);
      expect(Object.isFrozen(a?.ownerReferences?.[0])).toBe(true);
      await h.stop();
    }
  });

  it('does not share the metadata of a full-object informer', async () => {
    const h = await startInformer([
      configMap('a', { labels: { app: 'web' } }),
      configMap('b', { labels: { app: 'web' } }),
    ]);
    const [a, b] = h.cacheObjects().map((o) => o.metadata);
    expect(b?.labels).toEqual(a?.labels);
    expect(b?.labels).not.toBe(a?.labels);
    await h.stop();
  });

  it('refuses a metadataOnly that is not a boolean', () => {
    expect(
      () =>
        new Informer({
          backend: new FakeBackend(),
          type: configMaps,
          metadataOnly: 'yes' as unknown as boolean,
        }),
    ).toThrow(/metadataOnly/);
  });
});

describe('InformerRegistry with metadataOnly', () => {
  it('keeps the metadata-only informer of a kind apart from the full one, and shares each', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    for (const object of three) backend.set(configMaps, object);
    const registry = new InformerRegistry({ clock });
    const full = registry.acquire<ConfigMap>({ backend, type: configMaps });
    const meta = registry.acquire<PartialObjectMetadata>({ backend, type: configMaps, metadataOnly: true });
    const metaAgain = registry.acquire({ backend, type: configMaps, metadataOnly: true });
    const fullAgain = registry.acquire({ backend, type: configMaps, metadataOnly: false });
    expect(meta.informer).not.toBe(full.informer);
    expect(metaAgain.informer).toBe(meta.informer);
    expect(fullAgain.informer).toBe(full.informer);
    expect(registry.size).toBe(2);
    const controller = new AbortController();
    const run = registry.start(controller.signal);
    await registry.waitForSync(controller.signal);
    expect(full.informer.cache.get({ namespace: 'default', name: 'a' })?.data).toEqual({ big: 'x' });
    expectMetadataOnly(meta.informer.cache.list());
    controller.abort();
    await run;
  });
});
