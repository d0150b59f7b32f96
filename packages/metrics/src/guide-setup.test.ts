import { done, type KubeObject, Manager, resourceType } from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { parseExposition, sampleValue } from './exposition-test-support.ts';
import { Metrics } from './metrics.ts';
import { Names } from './names.ts';
import type { DebugKeys } from './server/index.ts';
import { OperationsServer } from './server/index.ts';

const websites = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});

function website(name: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Website', metadata: { namespace: 'default', name } };
}

describe('the setup of docs/guide/operations.md', () => {
  it('a manager with a built controller, its metrics and an operations server in the servers group', async () => {
    const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
    const backend = new FakeBackend({ clock });
    backend.set(websites, website('web'));
    const manager = new Manager({ clock, backend });
    const controller = manager.controller(websites).complete(() => done());
    const metrics = new Metrics({ clock })
      .instrument(manager, { name: 'website-operator' })
      .instrument(controller);
    const server = new OperationsServer({
      metrics,
      probes: manager,
      clock,
      metricsBindAddress: '127.0.0.1:0',
      healthProbeBindAddress: '127.0.0.1:0',
    });
    manager.add(server, { group: 'servers' });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await server.whenListening();
    await settle();
    await clock.advance(10);

    const ready = await fetch(`${server.url('health')}/readyz?verbose`);
    expect([ready.status, await ready.text()]).toEqual([
      200,
      '[+]ping ok\n[+]caches-synced ok\n[+]controllers-synced ok\nreadyz check passed\n',
    ]);
    const families = parseExposition(await (await fetch(`${server.url('metrics')}/metrics`)).text());
    expect(sampleValue(families, Names.reconcileTotal, { controller: 'website', result: 'success' })).toBe(1);
    expect(sampleValue(families, Names.leaderStatus, { name: 'website-operator' })).toBe(1);
    expect(sampleValue(families, Names.informerSynced, { informer: 'websites' })).toBe(1);
    expect(families.has('process_cpu_seconds_total')).toBe(true);
    const keys = (await (await fetch(`${server.url('debug')}/debug/keys`)).json()) as DebugKeys;
    expect(keys.controllers).toEqual([{ name: 'website', keys: [], truncated: false, hotLoopKeys: 0 }]);

    stop.abort();
    await run;
    expect(server.url('metrics')).toBeUndefined();
  });
});
