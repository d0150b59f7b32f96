import { describe, expect, it } from 'vitest';
import { ExpiredError, type ListOptions, type ResourceType } from '../backend/index.ts';
import type { ObjectEvent } from '../event/index.ts';
import { InformerErrorCodes } from './index.ts';
import { type ConfigMap, configMap, configMaps, startInformer } from './test-harness.ts';
import { settle } from './testing/index.ts';

const names = (events: readonly ObjectEvent<ConfigMap>[]): string[][] =>
  events.map((e) => [e.type, e.object.metadata.name ?? '']);

describe('Informer with odd watch events', () => {
  it('does not apply an event whose resourceVersion goes backwards, and relists with a consistent read instead', async () => {
    const h = await startInformer([configMap('a'), configMap('b')]);
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    await settle();
    h.replay.clear();
    const stale = { ...configMap('a', { data: { v: 'stale' } }) };
    h.backend.inject(configMaps, {
      type: 'MODIFIED',
      object: { ...stale, metadata: { ...stale.metadata, resourceVersion: '1' } },
    });
    await settle();
    expect(h.informer.cache.get({ namespace: 'default', name: 'a' })?.data).toEqual({ v: '1' });
    expect(h.informer.stats()).toMatchObject({ regressions: 1, relists: 1 });
    expect(h.backend.listCalls.at(-1)).toEqual({ limit: 500 });
    const warning = h.logger.records.find((r) => r.message === 'Resource version went backwards; relisting');
    expect((warning?.fields.err as { code?: string } | undefined)?.code).toBe(
      InformerErrorCodes.RESOURCE_VERSION_REGRESSION,
    );
    expect(h.replay.events).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('treats a duplicate ADDED for a known object as an update', async () => {
    const h = await startInformer([configMap('a')]);
    h.replay.clear();
    const [current] = h.backendObjects();
    h.backend.inject(configMaps, { type: 'ADDED', object: current });
    await settle();
    expect(names(h.replay.events)).toEqual([['update', 'a']]);
    expect(h.replay.violations).toEqual([]);
    expect(h.informer.cache.size).toBe(1);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('ignores a DELETED for a key it does not hold: no event, no change', async () => {
    const h = await startInformer([configMap('a')]);
    h.replay.clear();
    const ghost = configMap('ghost');
    h.backend.inject(configMaps, {
      type: 'DELETED',
      object: { ...ghost, metadata: { ...ghost.metadata, resourceVersion: '1' } },
    });
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(names(h.replay.events)).toEqual([['create', 'b']]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('logs and skips malformed events (no name, wrong kind, outside its namespace, garbage) and keeps going', async () => {
    const h = await startInformer([configMap('a')], { namespace: 'default' });
    h.replay.clear();
    h.backend.inject(configMaps, {
      type: 'ADDED',
      object: { kind: 'ConfigMap', metadata: { namespace: 'default' } },
    });
    h.backend.inject(configMaps, {
      type: 'ADDED',
      object: { kind: 'Secret', metadata: { name: 's', namespace: 'default' } },
    });
    h.backend.inject(configMaps, {
      type: 'ADDED',
      object: { metadata: { name: 'x', namespace: 'elsewhere' } },
    });
    h.backend.inject(configMaps, { type: 'ADDED' });
    h.backend.inject(configMaps, { type: 'ERROR', object: { code: 500 } });
    h.backend.inject(configMaps, null);
    h.backend.inject(configMaps, { type: 'BOOKMARK' });
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(names(h.replay.events)).toEqual([['create', 'b']]);
    expect(h.informer.stats().malformed).toBe(7);
    const skipped = h.logger.records.filter((r) => r.message === 'Skipped a malformed watch event');
    expect(skipped).toHaveLength(7);
    expect(skipped.map((r) => (r.fields.err as { code: string }).code)).toEqual(
      Array(7).fill(InformerErrorCodes.MALFORMED_EVENT),
    );
    expect(h.informer.state.phase).toBe('watching');
    expect(h.backend.watchCalls).toHaveLength(1);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('skips malformed list items and caches the rest', async () => {
    const h = await startInformer(
      [],
      {},
      {
        prepare: (backend) => {
          backend.set(configMaps, configMap('good'));
          const list = backend.list.bind(backend);
          backend.list = (async (type: ResourceType, options?: ListOptions) => {
            const page = await list(type, options);
            return { ...page, items: [...page.items, { metadata: {} }] };
          }) as typeof backend.list;
        },
      },
    );
    expect(h.cacheObjects().map((o) => o.metadata.name)).toEqual(['good']);
    expect(h.informer.stats().malformed).toBe(1);
    expect(h.informer.hasSynced()).toBe(true);
    await h.stop();
  });
});

describe('Informer relists (client-go Replace semantics)', () => {
  it('on relist emits deletes with finalStateUnknown and the cached state, updates for changed objects, creates for new ones, nothing for unchanged ones', async () => {
    const h = await startInformer([configMap('keep'), configMap('change'), configMap('gone')]);
    const cachedGone = h.informer.cache.get({ namespace: 'default', name: 'gone' });
    const cachedKeep = h.informer.cache.get({ namespace: 'default', name: 'keep' });
    h.replay.clear();
    h.backend.breakWatches(new ExpiredError('too old'));
    h.backend.set(configMaps, configMap('change', { data: { v: '2' } }));
    h.backend.remove(configMaps, { namespace: 'default', name: 'gone' });
    h.backend.set(configMaps, configMap('new'));
    h.backend.compact();
    await h.clock.advance(2_000);
    await settle();
    const byName = new Map(h.replay.events.map((e) => [e.object.metadata.name, e]));
    expect(byName.get('gone')).toEqual({ type: 'delete', object: cachedGone, finalStateUnknown: true });
    expect(byName.get('change')).toMatchObject({ type: 'update', object: { data: { v: '2' } } });
    expect(byName.get('new')).toMatchObject({ type: 'create' });
    expect(byName.has('keep')).toBe(false);
    expect(h.informer.cache.get({ namespace: 'default', name: 'keep' })).toBe(cachedKeep);
    expect(h.replay.violations).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('does not miss the Add of an object deleted by a watch event and re-created before a relist (kubernetes#83810)', async () => {
    const h = await startInformer([configMap('x')]);
    h.backend.remove(configMaps, { namespace: 'default', name: 'x' });
    await settle();
    h.backend.breakWatches(new ExpiredError('too old'));
    h.backend.set(configMaps, configMap('x', { data: { v: 'again' } }));
    h.backend.compact();
    await h.clock.advance(2_000);
    await settle();
    expect(names(h.replay.events)).toEqual([
      ['create', 'x'],
      ['delete', 'x'],
      ['create', 'x'],
    ]);
    expect(h.replay.violations).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('does not miss the delete of an object seen only through the watch when its DELETED is lost before a relist (kubernetes#115658)', async () => {
    const h = await startInformer([]);
    h.backend.set(configMaps, configMap('y'));
    await settle();
    h.backend.breakWatches(new ExpiredError('too old'));
    h.backend.remove(configMaps, { namespace: 'default', name: 'y' });
    h.backend.compact();
    await h.clock.advance(2_000);
    await settle();
    expect(
      h.replay.events.map((e) => [
        e.type,
        e.object.metadata.name,
        e.type === 'delete' && e.finalStateUnknown,
      ]),
    ).toEqual([
      ['create', 'y', false],
      ['delete', 'y', true],
    ]);
    expect(h.informer.cache.size).toBe(0);
    await h.stop();
  });

  it('re-delivers no stale event after a delete (client-go#338): a relist after the delete emits nothing more', async () => {
    const h = await startInformer([configMap('z')]);
    h.backend.remove(configMaps, { namespace: 'default', name: 'z' });
    await settle();
    h.replay.clear();
    h.backend.breakWatches(new ExpiredError('too old'));
    await h.clock.advance(2_000);
    await settle();
    expect(h.informer.stats().relists).toBe(1);
    expect(h.replay.events).toEqual([]);
    await h.stop();
  });
});

describe('Informer resync', () => {
  it('replays every cached object as update(o, o) with isResync on the period, without listing', async () => {
    const h = await startInformer([configMap('a'), configMap('b')], { resyncPeriodMs: 60_000 });
    h.replay.clear();
    await h.clock.advance(59_999);
    await settle();
    expect(h.replay.events).toEqual([]);
    await h.clock.advance(1);
    await settle();
    expect(
      h.replay.events.map((e) => [e.type, e.object.metadata.name, e.type === 'update' && e.isResync]),
    ).toEqual([
      ['update', 'a', true],
      ['update', 'b', true],
    ]);
    for (const e of h.replay.events) expect(e.type === 'update' && e.oldObject).toBe(e.object);
    await h.clock.advance(60_000);
    await settle();
    expect(h.replay.events).toHaveLength(4);
    expect(h.backend.listCalls).toHaveLength(1);
    expect(h.informer.stats().resyncs).toBe(2);
    await h.stop();
  });

  it('never resyncs with resyncPeriodMs 0', async () => {
    const h = await startInformer([configMap('a')]);
    h.replay.clear();
    await h.clock.advance(24 * 3_600_000);
    await settle();
    expect(h.replay.events.filter((e) => e.type === 'update')).toEqual([]);
    await h.stop();
  });
});
