import { describe, expect, it } from 'vitest';
import { AbortedError, AlreadyStartedError, OptionsError } from '../errors.ts';
import { shardSelectorFor } from '../selector/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { InformerRegistry, RegistryStoppedError } from './index.ts';
import { configMap, configMaps } from './test-harness.ts';
import { FakeBackend, settle } from './testing/index.ts';

function setup() {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  backend.set(configMaps, configMap('a', { labels: { app: 'web', tier: 'fe' } }));
  backend.set(configMaps, configMap('b', { namespace: 'other' }));
  const registry = new InformerRegistry({ clock });
  const controller = new AbortController();
  return { clock, backend, registry, controller };
}

describe('InformerRegistry', () => {
  it('shares one informer per backend, kind, namespace and selectors, comparing selectors in canonical form', () => {
    const { backend, registry } = setup();
    const one = registry.acquire({ backend, type: configMaps, labelSelector: 'app=web,tier=fe' });
    const same = registry.acquire({ backend, type: configMaps, labelSelector: 'tier = fe, app==web' });
    const otherNamespace = registry.acquire({ backend, type: configMaps, namespace: 'other' });
    const otherFields = registry.acquire({ backend, type: configMaps, fieldSelector: 'metadata.name=a' });
    const otherBackend = registry.acquire({
      backend: new FakeBackend(),
      type: configMaps,
      labelSelector: 'app=web,tier=fe',
    });
    expect(same.informer).toBe(one.informer);
    const distinct = new Set([one, otherNamespace, otherFields, otherBackend].map((h) => h.informer));
    expect(distinct.size).toBe(4);
    expect(registry.size).toBe(4);
  });

  it('shares one informer per shard selector, compared in canonical form', () => {
    const { backend, registry } = setup();
    const lower = shardSelectorFor(0, 2);
    const one = registry.acquire({ backend, type: configMaps, shardSelector: lower });
    const same = registry.acquire({
      backend,
      type: configMaps,
      shardSelector: `(${lower.replaceAll("'", '"')})`,
    });
    const upper = registry.acquire({ backend, type: configMaps, shardSelector: shardSelectorFor(1, 2) });
    const all = registry.acquire({ backend, type: configMaps, shardSelector: '' });
    expect(same.informer).toBe(one.informer);
    expect(new Set([one, upper, all].map((h) => h.informer)).size).toBe(3);
    expect(all.informer).toBe(registry.acquire({ backend, type: configMaps }).informer);
  });

  it('starts nothing before start, then every informer, and later acquisitions at once', async () => {
    const { backend, registry, controller } = setup();
    const first = registry.acquire({ backend, type: configMaps });
    await settle();
    expect(backend.listCalls).toHaveLength(0);
    const run = registry.start(controller.signal);
    await registry.waitForSync(controller.signal);
    expect(first.informer.cache.size).toBe(2);
    const later = registry.acquire({ backend, type: configMaps, namespace: 'other' });
    await later.informer.waitForSync(controller.signal);
    expect(later.informer.cache.list().map((o) => o.metadata.name)).toEqual(['b']);
    expect(registry.hasSynced()).toBe(true);
    controller.abort();
    await run;
    expect(backend.openWatches).toBe(0);
    expect(first.informer.state.phase).toBe('stopped');
  });

  it('stops and drops an informer when its last reference is released, and keeps it while one is held', async () => {
    const { backend, registry, controller } = setup();
    const run = registry.start(controller.signal);
    const a = registry.acquire({ backend, type: configMaps });
    const b = registry.acquire({ backend, type: configMaps });
    await registry.waitForSync(controller.signal);
    a.release();
    a.release();
    await settle();
    expect(registry.size).toBe(1);
    expect(backend.openWatches).toBe(1);
    b.release();
    await settle();
    expect(registry.size).toBe(0);
    expect(backend.openWatches).toBe(0);
    expect(b.informer.state.phase).toBe('stopped');
    const again = registry.acquire({ backend, type: configMaps });
    expect(again.informer).not.toBe(b.informer);
    await again.informer.waitForSync(controller.signal);
    controller.abort();
    await run;
  });

  it('waits for the sync of every informer it holds, but not for one released while waiting', async () => {
    const { backend, registry, controller, clock } = setup();
    const other = new FakeBackend({ clock });
    // Informers stream their lists by default: failing watches keeps this one from syncing.
    other.failNext('watch', new Error('down'), 1_000);
    const run = registry.start(controller.signal);
    registry.acquire({ backend, type: configMaps });
    const stuck = registry.acquire({ backend: other, type: configMaps });
    let synced = false;
    const waiting = registry.waitForSync(controller.signal).then(() => {
      synced = true;
    });
    await settle();
    expect(synced).toBe(false);
    expect(registry.hasSynced()).toBe(false);
    stuck.release();
    await waiting;
    expect(synced).toBe(true);
    controller.abort();
    await run;
  });

  it('rejects waitForSync with an AbortedError when its signal aborts first', async () => {
    const { backend, registry } = setup();
    registry.acquire({ backend, type: configMaps });
    const waitSignal = new AbortController();
    const waiting = registry.waitForSync(waitSignal.signal);
    waitSignal.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
  });

  it('refuses to start twice and to acquire once stopped, and validates specs', async () => {
    const { backend, registry, controller } = setup();
    const run = registry.start(controller.signal);
    await expect(registry.start(controller.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    expect(() => registry.acquire({ backend, type: { ...configMaps, plural: 'Bad Plural' } })).toThrow(
      OptionsError,
    );
    expect(() => registry.acquire({ backend, type: configMaps, labelSelector: 'a in (' })).toThrow(
      OptionsError,
    );
    controller.abort();
    await run;
    expect(() => registry.acquire({ backend, type: configMaps })).toThrow(RegistryStoppedError);
  });
});
