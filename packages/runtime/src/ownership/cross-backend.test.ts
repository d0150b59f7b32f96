import { describe, expect, it } from 'vitest';
import { isNotFound } from '../backend/index.ts';
import { Client, createOrUpdate } from '../client/index.ts';
import { OptionsError } from '../errors.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done } from '../reconcile/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { collectOrphans, OWNER_KEY_LABEL, OWNER_KIND_LABEL, ownerOf, setOwnerLabels } from './index.ts';

interface Widget extends KubeObject {
  readonly spec: { readonly text: string };
}
interface ConfigMap extends KubeObject {
  readonly data?: Record<string, string>;
}

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';
const cmKey = { namespace: 'kube', name: 'w1-cm' };

/** Widgets live in backend A (think NATS KV); their ConfigMaps in backend B (think Kubernetes). */
function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const logger = new MemoryLogger();
  const primaries = new ReferenceBackend({ types: [widgetType], clock, name: 'a' });
  const secondaries = new ReferenceBackend({ types: [configMapType], clock, name: 'b' });
  const manager = new Manager({ clock, logger, backend: primaries });
  const kube = new Client({ backend: secondaries, clock });
  const calls: ObjectKey[] = [];
  manager
    .controller(widgetType)
    .owns(configMapType, { backend: secondaries })
    .complete(async (key) => {
      calls.push(key);
      let w: Widget;
      try {
        w = await manager.client.get<Widget>(widgetType, key);
      } catch (error) {
        // The owner is gone: its ConfigMap is left to the orphan collector.
        if (isNotFound(error)) return done();
        throw error;
      }
      const skeleton: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { ...cmKey, name: `${key.name}-cm` },
      };
      await createOrUpdate(kube, configMapType, skeleton, (cm) =>
        setOwnerLabels({ ...cm, data: { text: w.spec.text } }, widgetType, w),
      );
      return done();
    });
  const collector = collectOrphans(manager, {
    ownerType: widgetType,
    secondaries: [{ type: configMapType, backend: secondaries }],
    intervalMs: 1_000,
  });
  const settle = async (ms = 400) => {
    for (let left = ms; left > 0; left -= 10) await clock.advance(10);
  };
  const cm = async () => {
    try {
      return await secondaries.get<ConfigMap>(configMapType, cmKey);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  return { clock, logger, primaries, secondaries, manager, calls, collector, settle, cm };
}

describe('a controller whose primary lives in one backend and its secondaries in another', () => {
  it('labels what it creates, is woken by changes to it, and the orphan collector removes it once the primary is gone', async () => {
    const t = setup();
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await t.settle();
    expect(t.manager.synced).toBe(true);
    // The builder and the collector share two informers: widgets in A, owned ConfigMaps in B.
    expect(t.manager.informers.size).toBe(2);

    await t.secondaries.create(configMapType, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unrelated', namespace: 'kube' },
    });
    const w1 = await t.primaries.create<Widget>(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: ns },
      spec: { text: 'hello' },
    });
    await t.settle();
    const created = await t.cm();
    expect(created?.data).toEqual({ text: 'hello' });
    expect(created?.metadata.labels).toEqual({
      [OWNER_KIND_LABEL]: 'Widget.suite.converge.dev',
      [OWNER_KEY_LABEL]: `${ns}_w1`,
    });
    expect(ownerOf(created as ConfigMap)).toEqual({
      group: 'suite.converge.dev',
      kind: 'Widget',
      key: { namespace: ns, name: 'w1' },
      uid: w1.metadata.uid,
    });
    // Only owned ConfigMaps are cached.
    const cmInformer = t.manager.informers.informers().find((i) => i.type.kind === 'ConfigMap');
    expect(cmInformer?.cache.keys()).toEqual([cmKey]);

    // A change to the secondary enqueues its owner, whose reconcile puts it back.
    const callsBefore = t.calls.length;
    await t.secondaries.update(configMapType, { ...(created as ConfigMap), data: { text: 'tampered' } });
    await t.settle();
    expect(t.calls.length).toBeGreaterThan(callsBefore);
    expect(t.calls.at(-1)).toEqual({ namespace: ns, name: 'w1' });
    expect((await t.cm())?.data).toEqual({ text: 'hello' });

    // So does deleting it: it is re-created.
    await t.secondaries.delete(configMapType, cmKey);
    await t.settle();
    expect((await t.cm())?.data).toEqual({ text: 'hello' });
    expect(t.collector.stats().deleted).toBe(0);

    // The primary goes; its reconcile leaves the ConfigMap; the collector removes it next round.
    await t.primaries.delete(widgetType, { namespace: ns, name: 'w1' });
    await t.settle(1_200);
    expect(await t.cm()).toBeUndefined();
    expect(t.collector.stats().deleted).toBe(1);
    expect((await t.secondaries.list(configMapType)).items.map((o) => o.metadata.name)).toEqual([
      'unrelated',
    ]);
    expect(t.logger.records.filter((r) => r.message === 'Deleted an orphaned object')).toHaveLength(1);
    abort.abort();
    await run;
  });

  it('refuses owner references across backends, and keeps them within one', () => {
    const t = setup();
    expect(() =>
      t.manager
        .controller(widgetType)
        .owns(configMapType, { backend: t.secondaries, ownership: 'references' })
        .complete(async () => done()),
    ).toThrow(OptionsError);
    expect(() =>
      t.manager.controller(widgetType).owns(configMapType, { ownership: 'weak' as never }),
    ).toThrow(OptionsError);
    const before = t.manager.informers.size;
    t.manager
      .controller(widgetType)
      .named('same-backend')
      .owns(configMapType, { ownership: 'labels', labelSelector: 'app=web' })
      .complete(async () => done());
    // Label ownership in the primary's own backend: a new informer filtered by kind and selector.
    expect(t.manager.informers.size).toBe(before + 1);
  });
});
