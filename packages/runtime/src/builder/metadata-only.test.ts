import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../backend/index.ts';
import { Client } from '../client/index.ts';
import { enqueueFromMapFunction } from '../handler/index.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done } from '../reconcile/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { VirtualClock } from '../testing/index.ts';

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';

const widget = (name: string): KubeObject & { spec: { text: string } } => ({
  apiVersion: 'suite.converge.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { text: name },
});

const configMap = (name: string, metadata: Partial<KubeObject['metadata']> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...metadata },
  data: { payload: 'x'.repeat(1000) },
});

async function settle(clock: VirtualClock, ms = 400): Promise<void> {
  for (let left = ms; left > 0; left -= 10) await clock.advance(10);
}

function expectMetadataOnly(object: object): void {
  expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
  expect(object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
}

function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
  const manager = new Manager({ clock, backend });
  return { clock, backend, manager };
}

describe('ControllerBuilder with metadataOnly', () => {
  it('owns(type, { metadataOnly: true }) maps owned objects to their owner from a metadata-only informer', async () => {
    const { clock, backend, manager } = setup();
    const owner = await backend.create(widgetType, widget('w1'));
    const calls: string[] = [];
    manager
      .controller(widgetType)
      .owns(configMapType, { metadataOnly: true })
      .complete((key) => {
        calls.push(key.name);
        return done();
      });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    calls.length = 0;
    const ownerReferences = [
      {
        apiVersion: 'suite.converge.dev/v1',
        kind: 'Widget',
        name: 'w1',
        uid: owner.metadata.uid ?? '',
        controller: true,
      },
    ];
    await backend.create(configMapType, configMap('owned', { ownerReferences }));
    await settle(clock);
    expect(calls).toEqual(['w1']);
    const [informer, ...others] = manager.informers.informers().filter((i) => i.type.plural === 'configmaps');
    expect(others, 'no full informer of the owned kind').toEqual([]);
    expect(informer?.name).toBe('configmaps:metadata');
    expect(informer?.cache.size).toBe(1);
    for (const object of informer?.cache.list() ?? []) expectMetadataOnly(object);
    abort.abort();
    await run;
  });

  it('watches(type, handler, { metadataOnly: true }) hands the handler metadata only', async () => {
    const { clock, backend, manager } = setup();
    await backend.create(widgetType, widget('w1'));
    const seen: KubeObject[] = [];
    const calls: string[] = [];
    manager
      .controller(widgetType)
      .watches(
        configMapType,
        enqueueFromMapFunction<KubeObject, ObjectKey>((object) => {
          seen.push(object);
          const target = object.metadata.annotations?.['example.com/widget'];
          return target === undefined ? [] : [{ namespace: ns, name: target }];
        }),
        { metadataOnly: true },
      )
      .complete((key) => {
        calls.push(key.name);
        return done();
      });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    calls.length = 0;
    await backend.create(
      configMapType,
      configMap('pointer', { annotations: { 'example.com/widget': 'w1' } }),
    );
    await settle(clock);
    expect(calls).toEqual(['w1']);
    expect(seen.length).toBeGreaterThan(0);
    for (const object of seen) expectMetadataOnly(object);
    abort.abort();
    await run;
  });
});

describe('Client metadata-only reads', () => {
  it('a manager’s client reads metadata from the metadata-only informer the builder started, with read-your-writes', async () => {
    const { clock, backend, manager } = setup();
    await backend.create(widgetType, widget('w1'));
    await backend.create(configMapType, configMap('a', { labels: { app: 'web' } }));
    await backend.create(configMapType, configMap('b'));
    manager
      .controller(widgetType)
      .owns(configMapType, { metadataOnly: true })
      .complete(() => done());
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    const before = manager.informers.size;
    const listed = await manager.client.listMetadata(configMapType, { namespace: ns });
    expect(listed.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    for (const object of listed) expectMetadataOnly(object);
    expect(
      (await manager.client.listMetadata(configMapType, { labelSelector: 'app=web' })).map(
        (o) => o.metadata.name,
      ),
    ).toEqual(['a']);
    const got = await manager.client.getMetadata(configMapType, { namespace: ns, name: 'a' });
    expectMetadataOnly(got);
    expect(got.metadata.labels).toEqual({ app: 'web' });
    expect(manager.informers.size, 'the same metadata-only informer, no full one').toBe(before);
    // A write shows at once, projected, even before the cache has it.
    const created = await manager.client.create(configMapType, configMap('c'));
    const after = await manager.client.listMetadata(configMapType);
    expect(after.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(after[2]).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: created.metadata });
    await expect(
      manager.client.getMetadata(configMapType, { namespace: ns, name: 'none' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    abort.abort();
    await run;
  });

  it('a client without a cache asks the backend for metadata only', async () => {
    const clock = new VirtualClock();
    const backend = new ReferenceBackend({ types: [configMapType], clock });
    for (const name of ['a', 'b']) await backend.create(configMapType, configMap(name));
    const calls: unknown[] = [];
    const recording = new Proxy(backend, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (prop === 'get' || prop === 'list') calls.push(args[args.length - 1]);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const client = new Client({ backend: recording });
    const listed = await client.listMetadata(configMapType, { namespace: ns });
    expect(listed.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    for (const object of listed) expectMetadataOnly(object);
    expectMetadataOnly(await client.getMetadata(configMapType, { namespace: ns, name: 'a' }));
    expect(calls).toEqual([
      expect.objectContaining({ metadataOnly: true, namespace: ns, limit: 500 }),
      expect.objectContaining({ metadataOnly: true }),
    ]);
  });
});
