import {
  done,
  type KubeObject,
  type LeaderElection,
  LeaderElector,
  Manager,
  MemoryLock,
  resourceType,
} from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './exposition-test-support.ts';
import { Metrics } from './metrics.ts';
import { Names } from './names.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

function widget(name: string): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { namespace: 'default', name, generation: 1 },
  };
}

describe('a manager, its informers, leadership and a dynamic controller', () => {
  it('reports informer lists, sync and resourceVersion age, leadership, and per-kind figures', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const backend = new FakeBackend({ clock });
    backend.set(widgets, widget('a'));
    let grant: ((lost: AbortSignal) => void) | undefined;
    const election: LeaderElection = { acquire: () => new Promise((resolve) => (grant = resolve)) };
    const manager = new Manager({ clock, backend, leaderElection: election });
    const dynamic = manager.dynamicController({ name: 'kinds', workers: 3 });
    const metrics = new Metrics({ clock, defaultMetrics: false })
      .instrument(manager, { name: 'my-operator' })
      .instrument(dynamic);
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await dynamic.serve(widgets, () => done());
    await settle();
    let families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.leaderStatus, { name: 'my-operator' })).toBe(0);
    grant?.(new AbortController().signal);
    await settle();
    backend.set(widgets, widget('b'));
    await settle();
    await clock.advance(30_000);
    families = parseExposition(await metrics.scrape());
    const i = { informer: 'widgets' };
    expect(sampleValue(families, Names.leaderStatus, { name: 'my-operator' })).toBe(1);
    expect(sampleValue(families, Names.informerSynced, i)).toBe(1);
    expect(sampleValue(families, `${Names.listDuration}_count`, { ...i, reason: 'initial' })).toBe(1);
    expect(sampleValue(families, Names.resourceVersionAge, i)).toBe(30);
    const k = { controller: 'kinds', kind: 'example.com/v1/widgets' };
    expect(sampleValue(families, Names.kinds, { controller: 'kinds' })).toBe(1);
    expect(sampleValue(families, `${Names.kindSync}_count`, k)).toBe(1);
    expect(sampleValue(families, Names.kindReconcileTotal, { ...k, result: 'success' })).toBe(2);
    expect(sampleValue(families, Names.kindEvents, { ...k, type: 'create', enqueued: 'true' })).toBe(2);
    expect(sampleValue(families, Names.maxConcurrent, { controller: 'kinds' })).toBe(3);
    expect(sampleValue(families, Names.depth, { name: 'kinds', priority: '0' })).toBe(0);
    stop.abort();
    await run;
  });

  it('reports a leader elector and the transitions of its lease', async () => {
    const clock = new VirtualClock();
    const elector = new LeaderElector({ lock: new MemoryLock().locker('a'), clock, name: 'my-lease' });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(elector, { name: 'my-lease' });
    const stop = new AbortController();
    const leading = elector.acquire(stop.signal);
    await clock.advance(0);
    await leading;
    const families = parseExposition(await metrics.scrape());
    expect(sampleValue(families, Names.leaderStatus, { name: 'my-lease' })).toBe(1);
    expect(sampleValue(families, Names.leaderTransitions, { name: 'my-lease' })).toBe(0);
    stop.abort();
    await elector.stopped();
  });

  it('refuses what it cannot instrument', () => {
    const metrics = new Metrics({ defaultMetrics: false });
    expect(() => metrics.instrument({} as never)).toThrow(/target/);
    expect(() => metrics.instrument(null as never)).toThrow(/target/);
    expect(() => new Metrics({ registry: {} as never })).toThrow(/registry/);
  });
});
