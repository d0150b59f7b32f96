import { afterEach, describe, expect, it } from 'vitest';
import { type Backend, type ResourceType, UnavailableError } from '../backend/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import { InformerRegistry } from '../informer/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { OrphanCollector, type OrphanCollectorOptions, setOwnerLabels } from './index.ts';

const { widget: widgetType, configMap: configMapType, clusterWidget: clusterWidgetType } = suiteTypes;
const ns = 'suite-a';

/** Resolves when `gate` does or `signal` aborts (then rejects, like a backend call would). */
async function pass(gate: Promise<void> | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (gate === undefined) return;
  await new Promise<void>((resolve, reject) => {
    void gate.then(resolve);
    signal?.addEventListener('abort', () => reject(new UnavailableError('aborted')), { once: true });
  });
}

/**
 * A backend whose gets can fail, whose lists and watches of one kind (`kindGates`: the informer
 * cannot sync) and whose watch events (`watchGate`) can be held back, with a hook before each delete.
 */
function controllable(inner: Backend) {
  const control = {
    failGet: undefined as Error | undefined,
    kindGates: new Map<string, Promise<void>>(),
    watchGate: undefined as Promise<void> | undefined,
    beforeDelete: undefined as ((type: ResourceType, key: ObjectKey) => Promise<void>) | undefined,
    gets: 0,
  };
  const backend = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'get') {
        return async (type: ResourceType, key: ObjectKey, options?: { signal?: AbortSignal }) => {
          control.gets++;
          if (control.failGet !== undefined) throw control.failGet;
          return target.get(type, key, options);
        };
      }
      if (prop === 'list') {
        return async (...args: Parameters<Backend['list']>) => {
          await pass(control.kindGates.get(args[0].kind), args[1]?.signal);
          return target.list(...args);
        };
      }
      if (prop === 'watch') {
        return (...args: Parameters<Backend['watch']>) => ({
          async *[Symbol.asyncIterator]() {
            await pass(control.kindGates.get(args[0].kind), args[1]?.signal);
            for await (const event of target.watch(...args)) {
              await pass(control.watchGate, args[1]?.signal);
              yield event;
            }
          },
        });
      }
      if (prop === 'delete') {
        return async (...args: Parameters<Backend['delete']>) => {
          await control.beforeDelete?.(args[0], args[1]);
          return target.delete(...args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { backend, control };
}

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

function setup(options: Partial<OrphanCollectorOptions> = {}) {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const logger = new MemoryLogger();
  const ownersInner = new ReferenceBackend({ types: [widgetType], clock, name: 'owners' });
  const secondariesInner = new ReferenceBackend({
    types: [configMapType, clusterWidgetType],
    clock,
    name: 'secondaries',
  });
  const owners = controllable(ownersInner);
  const secondaries = controllable(secondariesInner);
  const informers = new InformerRegistry({ clock, resyncPeriodMs: 0 });
  const collector = new OrphanCollector({
    informers,
    ownerType: widgetType,
    ownerBackend: owners.backend,
    secondaries: [{ type: configMapType, backend: secondaries.backend }],
    intervalMs: 1_000,
    clock,
    logger,
    ...options,
  });
  const stop = new AbortController();
  stops.push(stop);
  const run = async () => {
    const registry = informers.start(stop.signal);
    const collecting = collector.start(stop.signal);
    return Promise.all([registry, collecting]);
  };
  const widget = (name: string) =>
    ownersInner.create<KubeObject>(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name, namespace: ns },
      spec: {},
    } as KubeObject);
  const ownedConfigMap = (name: string, owner: KubeObject) =>
    secondariesInner.create(
      configMapType,
      setOwnerLabels(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube' } },
        widgetType,
        owner,
      ),
    );
  const configMapNames = async () =>
    (await secondariesInner.list(configMapType)).items.map((o) => o.metadata.name).sort();
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= 10) await clock.advance(Math.min(10, left));
  };
  return {
    clock,
    logger,
    owners,
    ownersInner,
    secondaries,
    secondariesInner,
    informers,
    collector,
    stop,
    run,
    widget,
    ownedConfigMap,
    configMapNames,
    advance,
  };
}

describe('OrphanCollector', () => {
  it('deletes nothing until every informer of the registry has synced, then collects at once', async () => {
    const t = setup();
    const gone = await t.widget('gone');
    await t.ownedConfigMap('orphan', gone);
    await t.ownersInner.delete(widgetType, { namespace: ns, name: 'gone' });
    // An unrelated informer of the same registry that cannot list yet: "all caches" includes it.
    let open: () => void = () => {};
    t.secondaries.control.kindGates.set('ClusterWidget', new Promise<void>((resolve) => (open = resolve)));
    t.informers.acquire({ backend: t.secondaries.backend, type: clusterWidgetType });
    const running = t.run();
    await t.advance(5_000);
    expect(await t.configMapNames()).toEqual(['orphan']);
    expect((await t.collector.collect()).synced).toBe(false);
    expect(t.collector.stats().rounds).toBe(0);
    open();
    await t.advance(200);
    expect(await t.configMapNames()).toEqual([]);
    expect(t.collector.stats()).toMatchObject({ rounds: 1, deleted: 1 });
    t.stop.abort();
    await running;
  });

  it('never deletes an object whose owner exists, even when the owner is not cached yet', async () => {
    const t = setup();
    const running = t.run();
    await t.advance(200);
    // The owners' watch events are held back: the new owner is not in the cache.
    let release: () => void = () => {};
    t.owners.control.watchGate = new Promise<void>((resolve) => (release = resolve));
    const live = await t.widget('live');
    await t.ownedConfigMap('owned', live);
    await t.advance(50); // the secondary informer sees the ConfigMap
    const round = await t.collector.collect();
    expect(round).toMatchObject({ examined: 1, confirmed: 1, deleted: [] });
    expect(t.owners.control.gets).toBe(1);
    expect(await t.configMapNames()).toEqual(['owned']);
    await t.advance(10_000);
    expect(await t.configMapNames()).toEqual(['owned']);
    expect(t.collector.stats().deleted).toBe(0);
    release();
    t.stop.abort();
    await running;
  });

  it('collects the secondaries of a deleted owner on the next round, and nothing else', async () => {
    const t = setup();
    const a = await t.widget('a');
    const b = await t.widget('b');
    await t.ownedConfigMap('a-1', a);
    await t.ownedConfigMap('a-2', a);
    await t.ownedConfigMap('b-1', b);
    await t.secondariesInner.create(configMapType, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unowned', namespace: 'kube', labels: { app: 'x' } },
    });
    const running = t.run();
    await t.advance(200);
    expect(t.collector.stats()).toMatchObject({ rounds: 1, examined: 3, deleted: 0 });
    expect(t.owners.control.gets).toBe(0); // every owner was in the cache
    await t.ownersInner.delete(widgetType, { namespace: ns, name: 'a' });
    await t.advance(500);
    expect(await t.configMapNames()).toEqual(['a-1', 'a-2', 'b-1', 'unowned']);
    await t.advance(600);
    expect(await t.configMapNames()).toEqual(['b-1', 'unowned']);
    expect(t.collector.stats()).toMatchObject({ rounds: 2, deleted: 2 });
    const deletions = t.logger.records.filter((r) => r.message === 'Deleted an orphaned object');
    expect(deletions.map((r) => r.fields)).toEqual(
      ['a-1', 'a-2'].map((name) =>
        expect.objectContaining({
          backend: 'secondaries',
          kind: 'ConfigMap',
          namespace: 'kube',
          name,
          ownerKind: 'Widget',
          ownerNamespace: ns,
          ownerName: 'a',
          ownerUid: a.metadata.uid,
        }),
      ),
    );
    t.stop.abort();
    await running;
  });

  it('deletes nothing in a round where the owner backend fails, and collects once it recovers', async () => {
    const t = setup();
    const a = await t.widget('a');
    await t.ownedConfigMap('a-1', a);
    await t.ownedConfigMap('a-2', a);
    const running = t.run();
    await t.advance(200);
    await t.ownersInner.delete(widgetType, { namespace: ns, name: 'a' });
    await t.advance(100);
    t.owners.control.failGet = new UnavailableError('owners unreachable');
    const round = await t.collector.collect();
    expect(round.ownerLookupError).toBe(t.owners.control.failGet);
    expect(round.deleted).toEqual([]);
    expect(t.owners.control.gets).toBe(1); // the round stopped at the first failure
    await t.advance(3_000);
    expect(await t.configMapNames()).toEqual(['a-1', 'a-2']);
    expect(t.collector.stats().ownerLookupErrors).toBeGreaterThanOrEqual(3);
    expect(t.logger.records.some((r) => r.message.startsWith('Owner lookup failed'))).toBe(true);
    t.owners.control.failGet = undefined;
    await t.advance(1_000);
    expect(await t.configMapNames()).toEqual([]);
    t.stop.abort();
    await running;
  });

  it('treats an owner re-created with another uid as gone, but keeps what the new owner adopted', async () => {
    const t = setup();
    const first = await t.widget('w');
    await t.ownedConfigMap('stale', first);
    await t.ownedConfigMap('adopted', first);
    const running = t.run();
    await t.advance(200);
    await t.ownersInner.delete(widgetType, { namespace: ns, name: 'w' });
    const second = await t.widget('w');
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    const adopted = await t.secondariesInner.get(configMapType, { namespace: 'kube', name: 'adopted' });
    await t.secondariesInner.update(configMapType, setOwnerLabels(adopted, widgetType, second));
    await t.advance(1_100);
    expect(await t.configMapNames()).toEqual(['adopted']);
    t.stop.abort();
    await running;
  });

  it('does not delete an object that changed after it was read (uid and resourceVersion preconditions)', async () => {
    const t = setup();
    const w = await t.widget('w');
    await t.ownedConfigMap('racing', w);
    const running = t.run();
    await t.advance(200);
    await t.ownersInner.delete(widgetType, { namespace: ns, name: 'w' });
    await t.advance(100);
    const replacement = await t.widget('w');
    t.secondaries.control.beforeDelete = async (type, key) => {
      // The new owner adopts the object between the collector's read and its delete.
      const current = await t.secondariesInner.get(type, key);
      await t.secondariesInner.update(type, setOwnerLabels(current, widgetType, replacement));
    };
    const round = await t.collector.collect();
    expect(round.conflicts).toBe(1);
    expect(round.deleted).toEqual([]);
    expect(await t.configMapNames()).toEqual(['racing']);
    t.secondaries.control.beforeDelete = undefined;
    await t.advance(2_000);
    expect(await t.configMapNames()).toEqual(['racing']);
    t.stop.abort();
    await running;
  });

  it('stops promptly on abort, releases its informers, and starts once', async () => {
    const t = setup();
    const running = t.run();
    await t.advance(200);
    expect(t.informers.size).toBe(2);
    t.stop.abort();
    await running;
    expect(t.informers.size).toBe(0);
    expect((await t.collector.collect()).synced).toBe(false);
    await expect(t.collector.start(new AbortController().signal)).rejects.toBeInstanceOf(AlreadyStartedError);

    const early = setup();
    early.owners.control.kindGates.set('Widget', new Promise(() => {}));
    const pending = early.run();
    await early.advance(100);
    early.stop.abort();
    await pending; // resolves though nothing ever synced
  });

  it('is leader-gated by default and validates its options', () => {
    const t = setup();
    expect(t.collector.needLeaderElection).toBe(true);
    expect(t.collector.name).toBe('orphans:widget');
    expect(setup({ needLeaderElection: false }).collector.needLeaderElection).toBe(false);
    const bad: [Partial<OrphanCollectorOptions>, string][] = [
      [{ intervalMs: 0 }, 'intervalMs'],
      [{ secondaries: [] }, 'secondaries'],
      [{ secondaries: [{ type: configMapType, backend: undefined as never }] }, 'secondaries[0].backend'],
      [{ ownerBackend: {} as Backend }, 'ownerBackend'],
      [{ informers: {} as InformerRegistry }, 'informers'],
      [{ needLeaderElection: 'yes' as never }, 'needLeaderElection'],
    ];
    for (const [options, field] of bad) {
      expect(() => setup(options), field).toThrow(OptionsError);
      try {
        setup(options);
      } catch (error) {
        expect((error as OptionsError).field).toBe(field);
      }
    }
  });
});
