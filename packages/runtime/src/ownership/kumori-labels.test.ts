import { describe, expect, it } from 'vitest';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done } from '../reconcile/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { collectOrphans, kumoriOwnerLabels } from './index.ts';

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';

/** A ConfigMap as a Kumori controller labels its secondaries: the owner's kind alone, and its key. */
function kumoriLabelled(name: string, owner: string): KubeObject & { data: Record<string, string> } {
  const owned = { 'kumori/ownerkind': 'Widget', 'kumori/ownerkey': `${ns}_${owner}` };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'kube',
      labels: owned,
      annotations: { 'kumori/ownerkind': 'Widget', 'kumori/ownerkey': `${ns}/${owner}` },
    },
    data: {},
  };
}

describe('objects a Kumori controller labelled (kumoriOwnerLabels)', () => {
  it('wake their owner when they change, and are collected as orphans once their owner is gone', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const primaries = new ReferenceBackend({ types: [widgetType], clock, name: 'nats' });
    const secondaries = new ReferenceBackend({ types: [configMapType], clock, name: 'kube' });
    await primaries.create(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: ns },
      spec: {},
    });
    await secondaries.create(configMapType, kumoriLabelled('w1-config', 'w1'));
    await secondaries.create(configMapType, kumoriLabelled('ghost-config', 'ghost'));
    const manager = new Manager({ clock, backend: primaries });
    const calls: ObjectKey[] = [];
    manager
      .controller(widgetType)
      .owns(configMapType, { backend: secondaries, ownerLabels: kumoriOwnerLabels })
      .complete((key) => {
        calls.push(key);
        return done();
      });
    const collector = collectOrphans(manager, {
      ownerType: widgetType,
      secondaries: [{ type: configMapType, backend: secondaries }],
      ownerLabels: kumoriOwnerLabels,
      intervalMs: 1_000,
    });
    const settle = async (ms = 400) => {
      for (let left = ms; left > 0; left -= 10) await clock.advance(10);
    };
    const names = async () =>
      (await secondaries.list(configMapType)).items.map((o) => o.metadata.name).sort();

    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle();
    // The controller and the collector share the informers: widgets, and Kumori-labelled ConfigMaps.
    expect(manager.informers.size).toBe(2);
    // The ghost's ConfigMap is collected in the first round; w1's stays.
    expect(await names()).toEqual(['w1-config']);
    expect(collector.stats().deleted).toBe(1);

    const before = calls.length;
    const cm = await secondaries.get<KubeObject & { data: Record<string, string> }>(configMapType, {
      namespace: 'kube',
      name: 'w1-config',
    });
    await secondaries.update(configMapType, { ...cm, data: { edited: 'yes' } });
    await settle();
    expect(calls.slice(before)).toEqual([{ namespace: ns, name: 'w1' }]);

    await primaries.delete(widgetType, { namespace: ns, name: 'w1' });
    await settle(1_200);
    expect(await names()).toEqual([]);
    expect(collector.stats().deleted).toBe(2);
    abort.abort();
    await run;
  });
});
