import { describe, expect, it } from 'vitest';
import { CacheClosedError } from '../cache/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { fnv1a64 } from '../selector/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { Informer, stripManagedFields } from './index.ts';
import { type ConfigMap, configMap, configMaps, startInformer } from './test-harness.ts';
import { FakeBackend, settle } from './testing/index.ts';

const three = [configMap('a'), configMap('b'), configMap('c', { namespace: 'other' })];

describe('Informer list and watch', () => {
  it('lists page by page with limit and continue, then watches from the list resourceVersion with bookmarks', async () => {
    const h = await startInformer(three, { pageSize: 2 });
    expect(h.backend.listCalls).toEqual([{ limit: 2 }, { limit: 2, continue: expect.any(String) }]);
    expect(h.backend.watchCalls).toHaveLength(1);
    const watch = h.backend.watchCalls[0];
    expect(watch?.resourceVersion).toBe('3');
    expect(watch?.allowBookmarks).toBe(true);
    expect(watch?.timeoutMs).toBeGreaterThanOrEqual(300_000);
    expect(watch?.timeoutMs).toBeLessThanOrEqual(600_000);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    expect(h.informer.lastSyncResourceVersion).toBe('3');
    expect(h.informer.state).toEqual({ phase: 'watching', resourceVersion: '3' });
    await h.stop();
  });

  it('passes namespace and selectors to every list and watch', async () => {
    const h = await startInformer(three, {
      namespace: 'default',
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name!=x',
    });
    expect(h.backend.listCalls[0]).toEqual({
      namespace: 'default',
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name!=x',
      limit: 500,
    });
    expect(h.backend.watchCalls[0]).toMatchObject({
      namespace: 'default',
      labelSelector: 'a=b',
      fieldSelector: 'metadata.name!=x',
    });
    await h.stop();
  });

  it('tells every watch that managedFields may be left out only while the transform is the default, which drops them', async () => {
    for (const initialList of ['paginated', 'watch-list'] as const) {
      const plain = await startInformer(three, { initialList });
      expect(plain.backend.watchCalls.length).toBeGreaterThan(0);
      for (const call of plain.backend.watchCalls) expect(call.omitManagedFields).toBe(true);
      await plain.stop();
      const keeping = await startInformer(three, { initialList, transform: (object) => object });
      for (const call of keeping.backend.watchCalls) expect(call.omitManagedFields).toBeUndefined();
      await keeping.stop();
    }
  });

  it('passes a shard selector, in canonical form, to every list and watch and caches only its shard', async () => {
    const h = fnv1a64('default');
    const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;
    const spelled = `( shardRange(object.metadata.namespace,"${hex(h)}","${hex(h + 1n)}") )`;
    const canonical = `shardRange(object.metadata.namespace, '${hex(h)}', '${hex(h + 1n)}')`;
    const harness = await startInformer(three, { shardSelector: spelled });
    expect(harness.backend.listCalls[0]).toEqual({ shardSelector: canonical, limit: 500 });
    expect(harness.backend.watchCalls[0]).toMatchObject({ shardSelector: canonical });
    expect(harness.cacheObjects().map((o) => o.metadata.name)).toEqual(['a', 'b']);
    await harness.stop();
    expect(() => new Informer({ backend: harness.backend, type: configMaps, shardSelector: 'nope' })).toThrow(
      OptionsError,
    );
  });

  it('delivers the initial list as creates marked isInInitialList, then syncs', async () => {
    const h = await startInformer(three);
    expect(
      h.replay.events.map((e) => [
        e.type,
        e.object.metadata.name,
        'isInInitialList' in e && e.isInInitialList,
      ]),
    ).toEqual([
      ['create', 'a', true],
      ['create', 'b', true],
      ['create', 'c', true],
    ]);
    expect(h.informer.hasSynced()).toBe(true);
    await expect(h.informer.waitForSync(new AbortController().signal)).resolves.toBeUndefined();
    await h.stop();
  });

  it('turns watch events into create, update(old, new) and delete with the last state', async () => {
    const h = await startInformer([configMap('a')]);
    h.replay.clear();
    const before = h.informer.cache.get({ namespace: 'default', name: 'a' });
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    h.backend.set(configMaps, configMap('n'));
    h.backend.remove(configMaps, { namespace: 'default', name: 'n' });
    await settle();
    const [update, create, remove] = h.replay.events as [
      ObjectEvent<ConfigMap>,
      ObjectEvent<ConfigMap>,
      ObjectEvent<ConfigMap>,
    ];
    expect(update).toMatchObject({ type: 'update', object: { data: { v: '1' } } });
    expect(update.type === 'update' && update.oldObject).toBe(before);
    expect(create).toMatchObject({ type: 'create', object: { metadata: { name: 'n' } } });
    expect('isInInitialList' in create).toBe(false);
    expect(remove).toMatchObject({
      type: 'delete',
      object: { metadata: { name: 'n', resourceVersion: '4' } },
    });
    expect('finalStateUnknown' in remove).toBe(false);
    expect(h.replay.violations).toEqual([]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    expect(h.informer.stats()).toMatchObject({ lists: 1, relists: 0, watches: 1, events: 3 });
    await h.stop();
  });

  it('advances the resume point with bookmarks', async () => {
    const h = await startInformer([configMap('a')]);
    const other = { ...configMaps, kind: 'Secret', plural: 'secrets' };
    h.backend.set(other, { metadata: { name: 's', namespace: 'default' } });
    h.backend.bookmark();
    await settle();
    expect(h.informer.lastSyncResourceVersion).toBe('2');
    expect(h.informer.cache.resourceVersion).toBe('2');
    h.backend.dropWatches();
    await h.clock.advance(0);
    await settle();
    expect(h.backend.watchCalls.map((w) => w.resourceVersion)).toEqual(['1', '2']);
    await h.stop();
  });
});

describe('Informer listeners', () => {
  it('replays the cache to a late subscriber as initial-list creates before any later event', async () => {
    const h = await startInformer(three);
    const late: ObjectEvent<ConfigMap>[] = [];
    h.informer.subscribe((e) => late.push(e));
    expect(
      late.map((e) => [e.type, e.object.metadata.name, e.type === 'create' && e.isInInitialList]),
    ).toEqual([
      ['create', 'a', true],
      ['create', 'b', true],
      ['create', 'c', true],
    ]);
    h.backend.set(configMaps, configMap('d'));
    await settle();
    expect(late.at(-1)).toMatchObject({ type: 'create', object: { metadata: { name: 'd' } } });
    await h.stop();
  });

  it('catches and logs a listener that throws or rejects, and still delivers to the others', async () => {
    const h = await startInformer([]);
    const seen: string[] = [];
    h.informer.subscribe(() => {
      throw new Error('sync boom');
    });
    h.informer.subscribe((async () => {
      throw new Error('async boom');
    }) as unknown as (e: ObjectEvent<ConfigMap>) => void);
    h.informer.subscribe((e) => seen.push(e.object.metadata.name ?? ''));
    h.backend.set(configMaps, configMap('a'));
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(seen).toEqual(['a', 'b']);
    expect(h.informer.stats().listenerErrors).toBe(4);
    const logged = h.logger.records.filter((r) => r.message === 'Informer listener failed');
    expect(logged.map((r) => (r.fields.err as Error).message).sort()).toEqual([
      'async boom',
      'async boom',
      'sync boom',
      'sync boom',
    ]);
    expect(h.cacheObjects()).toEqual(h.backendObjects());
    await h.stop();
  });

  it('stops delivering to a listener once it unsubscribes', async () => {
    const h = await startInformer([]);
    const seen: string[] = [];
    const off = h.informer.subscribe((e) => seen.push(e.object.metadata.name ?? ''));
    h.backend.set(configMaps, configMap('a'));
    await settle();
    off();
    off();
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(seen).toEqual(['a']);
    await h.stop();
  });
});

describe('Informer transform', () => {
  it('strips managedFields by default, in lists and in watch events, without touching other fields', async () => {
    const withFields = {
      ...configMap('a'),
      metadata: { ...configMap('a').metadata, managedFields: [{ manager: 'kubectl' }] },
    };
    const h = await startInformer([withFields]);
    expect(h.informer.cache.get({ namespace: 'default', name: 'a' })?.metadata).not.toHaveProperty(
      'managedFields',
    );
    h.backend.set(configMaps, { ...withFields, metadata: { ...withFields.metadata, name: 'b' } });
    await settle();
    const b = h.informer.cache.get({ namespace: 'default', name: 'b' });
    expect(b?.metadata).not.toHaveProperty('managedFields');
    expect(b?.data).toEqual({ v: '0' });
    const plain = configMap('p');
    expect(stripManagedFields(plain)).toBe(plain);
    await h.stop();
  });

  it('applies a custom transform, and caches untransformed (and logs) an object whose transform throws or breaks it', async () => {
    const h = await startInformer([configMap('a'), configMap('bad'), configMap('nameless')], {
      transform: (o) => {
        if (o.metadata.name === 'bad') throw new Error('nope');
        if (o.metadata.name === 'nameless') return { ...o, metadata: {} };
        return { ...o, data: { v: 'transformed' } };
      },
    });
    expect(h.cacheObjects().map((o) => [o.metadata.name, o.data?.v])).toEqual([
      ['a', 'transformed'],
      ['bad', '0'],
      ['nameless', '0'],
    ]);
    expect(h.informer.stats().transformErrors).toBe(2);
    expect(h.logger.records.some((r) => r.message === 'Informer transform failed')).toBe(true);
    await h.stop();
  });
});

describe('Informer lifecycle', () => {
  it('stops on its signal: closes the watch, resolves start, keeps the last contents', async () => {
    const h = await startInformer(three);
    expect(h.backend.openWatches).toBe(1);
    await h.stop();
    expect(h.backend.openWatches).toBe(0);
    expect(h.informer.state).toEqual({ phase: 'stopped' });
    expect(h.informer.cache.size).toBe(3);
  });

  it('refuses a second start', async () => {
    const h = await startInformer([]);
    await expect(h.informer.start(new AbortController().signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    await h.stop();
  });

  it('rejects waitForSync when it stops before its first list succeeded', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    // The default reads the state with a streamed list: a watch.
    backend.failNext('watch', new Error('down'), 5);
    const informer = new Informer({ backend, type: configMaps, clock });
    const controller = new AbortController();
    const run = informer.start(controller.signal);
    const waiting = informer.waitForSync(new AbortController().signal);
    await settle();
    controller.abort();
    await run;
    await expect(waiting).rejects.toBeInstanceOf(CacheClosedError);
    expect(informer.hasSynced()).toBe(false);
  });

  it('does nothing when started with an aborted signal', async () => {
    const backend = new FakeBackend();
    const informer = new Informer({ backend, type: configMaps });
    await informer.start(AbortSignal.abort());
    expect(backend.listCalls).toEqual([]);
  });

  it('validates its options at construction', () => {
    const backend = new FakeBackend();
    const bad = [
      { backend: {} },
      { type: { ...configMaps, kind: 'lower' } },
      { namespace: 'x', type: { ...configMaps, namespaced: false } },
      { labelSelector: 'a in (' },
      { fieldSelector: 'metadata.name' },
      { pageSize: 0 },
      { resyncPeriodMs: -1 },
      { watchTimeoutMinMs: 10, watchTimeoutMaxMs: 5 },
      { backoff: { initialMs: 0 } },
      { backoff: { factor: 0.5 } },
      { backoff: { initialMs: 100, maxMs: 50 } },
      { logger: {} },
      { clock: {} },
      { transform: 'x' },
    ];
    for (const options of bad) {
      expect(() => new Informer({ backend, type: configMaps, ...(options as object) })).toThrow(OptionsError);
    }
    expect(
      () =>
        new Informer({
          backend,
          type: configMaps,
          fieldSelector: 'spec.nodeName=n1',
          logger: new MemoryLogger(),
        }),
    ).not.toThrow();
  });
});
