import { describe, expect, it } from 'vitest';
import { ExpiredError, UnavailableError } from '../backend/index.ts';
import type { ListDetail, WatchEndReason } from './index.ts';
import { InformerRegistry } from './registry.ts';
import { configMap, configMaps, startInformer } from './test-harness.ts';
import { FakeBackend, settle } from './testing/index.ts';

function recorder() {
  const lists: [number, ListDetail][] = [];
  const ends: WatchEndReason[] = [];
  return {
    lists,
    ends,
    hooks: {
      onList: (_: string, ms: number, detail: ListDetail) => lists.push([ms, detail]),
      onWatchEnd: (_: string, reason: WatchEndReason) => ends.push(reason),
    },
  };
}

describe('Informer metric hooks', () => {
  it('reports watch restarts and relists by reason, and when the resourceVersion last advanced', async () => {
    const h = await startInformer([configMap('a')]);
    const r = recorder();
    expect(h.informer.resourceVersionSeenAt).toBeNaN();
    h.informer.observe(r.hooks);
    await h.clock.advance(5_000);
    h.backend.set(configMaps, configMap('a', { data: { v: '1' } }));
    await settle();
    expect(h.informer.resourceVersionSeenAt).toBe(5_000);
    h.backend.breakWatches(new ExpiredError('too old'));
    await settle();
    expect(r.ends).toEqual(['expired']);
    expect(r.lists).toEqual([[0, { method: 'paginated', reason: 'expired', objects: 1 }]]);
    h.backend.breakWatches(new UnavailableError('down'));
    await settle();
    expect(r.ends).toEqual(['expired', 'error']);
    expect(r.lists).toHaveLength(1);
    await h.stop();
  });

  it('a hook that throws does not stop the informer', async () => {
    const h = await startInformer([configMap('a')]);
    h.informer.observe({
      onWatchEnd: () => {
        throw new Error('broken');
      },
    });
    h.backend.breakWatches(new ExpiredError('too old'));
    await settle();
    await h.clock.advance(60_000);
    h.backend.set(configMaps, configMap('b'));
    await settle();
    expect(h.informer.cache.list()).toHaveLength(2);
    await h.stop();
  });

  it('the registry adds its hooks to informers held now and created later, and the first list is initial', async () => {
    const backend = new FakeBackend();
    const registry = new InformerRegistry({ initialList: 'paginated' });
    const r = recorder();
    registry.observe(r.hooks);
    const first = registry.acquire({ backend, type: configMaps });
    const signal = new AbortController();
    const run = registry.start(signal.signal);
    await registry.waitForSync(signal.signal);
    await settle();
    expect(r.lists.map(([, d]) => d.reason)).toEqual(['initial']);
    const second = registry.acquire({ backend, type: configMaps, namespace: 'other' });
    await second.informer.waitForSync(signal.signal);
    await settle();
    expect(r.lists.map(([, d]) => d.reason)).toEqual(['initial', 'initial']);
    expect(() => registry.observe(undefined as never)).toThrow(/hooks/);
    first.release();
    second.release();
    signal.abort();
    await run;
  });
});
