import { done, type KubeObject, Manager, resourceType } from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../metrics.ts';
import { startServer } from '../test-harness.ts';
import type { DebugKeys } from './debug-keys.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
type Widget = KubeObject & { status?: { n?: number } };

describe('/debug/keys and metrics of a hot loop', () => {
  it('mark the flagged key (hotLoop, chain), count it per controller, filter ?state=hotloop; converge_hot_loop_keys and converge_self_caused_reconciles_total', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
    const backend = new FakeBackend({ clock });
    for (const name of ['hot', 'calm'])
      backend.set(widgets, {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name, namespace: 'ns' },
      });
    const manager = new Manager({ clock, backend });
    // Every run of `hot` takes 100 ms, then writes its status again: its own echo runs it again.
    const controller = manager.controller(widgets).complete(async (key, { signal }) => {
      if (key.name !== 'hot') return done();
      await clock.sleep(100, signal);
      const w = await manager.client.get<Widget>(widgets, key);
      await manager.client.updateStatus(widgets, { ...w, status: { n: (w.status?.n ?? 0) + 1 } });
      return done();
    });
    const metrics = new Metrics({ clock, defaultMetrics: false }).instrument(controller);
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    await settle();
    for (let i = 0; i < 12; i++) {
      await clock.advance(100);
      await settle();
    }
    const http = await startServer({ metrics, clock });

    const doc = (await (await http.get('/debug/keys')).json()) as DebugKeys;
    const [widget] = doc.controllers;
    expect(widget?.hotLoopKeys).toBe(1);
    const hot = widget?.keys.find((k) => k.key === 'ns/hot');
    expect(hot?.state).toBe('running');
    expect(hot?.chain?.[0]).toMatch(/^modified Widget ns\/hot@\d+ via for:Widget$/);
    expect(hot?.chain?.[1]).toMatch(
      /^written by reconcile widget-\w+ of controller widget \(ns\/hot\), which ran because: modified Widget ns\/hot@\d+ via for:Widget$/,
    );
    expect(hot?.hotLoop).toEqual({
      since: '2026-12-06T12:00:01.000Z',
      selfCausedRuns: 12,
      chain: expect.arrayContaining([expect.stringMatching(/^written by reconcile widget-/)]),
    });

    const filtered = (await (await http.get('/debug/keys?state=hotloop')).json()) as DebugKeys;
    expect(filtered.controllers[0]?.keys.map((k) => k.key)).toEqual(['ns/hot']);

    const text = await metrics.scrape();
    expect(text).toContain('converge_hot_loop_keys{controller="widget"} 1');
    expect(text).toMatch(/converge_self_caused_reconciles_total\{controller="widget"\} 12\n/);

    // The loop stops: 30 s later the key is no longer flagged.
    stop.abort();
    await running;
    await clock.advance(30_000);
    expect(await metrics.scrape()).toContain('converge_hot_loop_keys{controller="widget"} 0');
    await http.stop();
  });
});
