import { describe, expect, it } from 'vitest';
import {
  type Backend,
  createOrUpdate,
  done,
  isNotFound,
  type KubeObject,
  Manager,
  NotFoundError,
  type ObjectKey,
  type ResourceType,
  setControllerReference,
  type WatchOptions,
} from '../src/index.ts';
import { ReferenceBackend, suiteTypes } from '../src/testing/backend-suite/index.ts';
import { VirtualClock } from '../src/testing/index.ts';

interface Widget extends KubeObject {
  readonly spec: { readonly text: string };
  readonly status?: { readonly seen?: string };
}
interface ConfigMap extends KubeObject {
  readonly data?: Record<string, string>;
}

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';

async function settle(clock: VirtualClock, rounds = 40): Promise<void> {
  for (let i = 0; i < rounds; i++) await clock.advance(10);
}

/** Delays every watch event by `lagMs` on the clock, so the cache lags behind writes. */
function lagging(inner: Backend, clock: VirtualClock, lagMs: number): Backend {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'watch') {
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return (type: ResourceType, options?: WatchOptions) => ({
        async *[Symbol.asyncIterator]() {
          // Only live events lag: a streamed initial list arrives at once, as a list would.
          let live = options?.sendInitialEvents !== true;
          for await (const event of target.watch(type, options)) {
            if (live) {
              try {
                await clock.sleep(lagMs, options?.signal);
              } catch {
                return; // the watch was aborted while its event lagged
              }
            }
            if (event.type === 'BOOKMARK' && event.initialEventsEnd === true) live = true;
            yield event;
          }
        },
      });
    },
  });
}

function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
  const manager = new Manager({ clock, backend: lagging(backend, clock, 50) });
  const calls: ObjectKey[] = [];
  const readBack: string[] = [];
  manager
    .controller(widgetType)
    .owns(configMapType)
    .complete(async (key, ctx) => {
      calls.push(key);
      let w: Widget;
      try {
        w = await manager.client.get<Widget>(widgetType, key);
      } catch (error) {
        if (isNotFound(error)) return done();
        throw error;
      }
      const skeleton: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `${key.name}-cm`, namespace: key.namespace },
      };
      await createOrUpdate(manager.client, configMapType, skeleton, (cm) =>
        setControllerReference(w, { ...cm, data: { text: w.spec.text } }),
      );
      // Read-your-writes: the cache may not have the ConfigMap yet, the client must.
      const cm = await manager.client.get<ConfigMap>(configMapType, {
        namespace: key.namespace,
        name: `${key.name}-cm`,
      });
      readBack.push(cm.data?.text ?? '<missing>');
      if (w.status?.seen !== w.spec.text) {
        await manager.client.updateStatus(widgetType, { ...w, status: { seen: w.spec.text } });
      }
      ctx.logger.info({}, 'reconciled');
      return done();
    });
  return { clock, backend, manager, calls, readBack };
}

describe('Manager with a backend, the builder and the cached client', () => {
  it('reconciles a primary object into an owned object and status, and re-creates the owned object when it is deleted', async () => {
    const { clock, backend, manager, readBack } = setup();
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    expect(manager.synced).toBe(true);
    await backend.create(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: ns },
      spec: { text: 'hello' },
    } as Widget);
    await settle(clock);
    const cm = await backend.get<ConfigMap>(configMapType, { namespace: ns, name: 'w1-cm' });
    expect(cm.data).toEqual({ text: 'hello' });
    expect(cm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Widget', name: 'w1', controller: true });
    expect((await backend.get<Widget>(widgetType, { namespace: ns, name: 'w1' })).status).toEqual({
      seen: 'hello',
    });
    expect(readBack[0]).toBe('hello');

    await backend.delete(configMapType, { namespace: ns, name: 'w1-cm' });
    await settle(clock);
    expect((await backend.get<ConfigMap>(configMapType, { namespace: ns, name: 'w1-cm' })).data).toEqual({
      text: 'hello',
    });

    const current = await backend.get<Widget>(widgetType, { namespace: ns, name: 'w1' });
    await backend.update(widgetType, { ...current, spec: { text: 'bye' } });
    await settle(clock);
    expect((await backend.get<ConfigMap>(configMapType, { namespace: ns, name: 'w1-cm' })).data).toEqual({
      text: 'bye',
    });
    expect(readBack.every((t) => t !== '<missing>')).toBe(true);
    abort.abort();
    await run;
  });

  it('reads through the cache and throws NotFoundError for objects that do not exist', async () => {
    const { clock, manager } = setup();
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    await expect(manager.client.get(configMapType, { namespace: ns, name: 'nope' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const created = await manager.client.create<ConfigMap>(configMapType, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mine', namespace: ns, labels: { app: 'x' } },
      data: { a: '1' },
    });
    // Immediately, before the watch delivers it: read-your-writes.
    expect(
      (await manager.client.get<ConfigMap>(configMapType, { namespace: ns, name: 'mine' })).metadata
        .resourceVersion,
    ).toBe(created.metadata.resourceVersion);
    expect(
      (await manager.client.list(configMapType, { namespace: ns, labelSelector: 'app=x' })).map(
        (o) => o.metadata.name,
      ),
    ).toEqual(['mine']);
    await manager.client.delete(configMapType, { namespace: ns, name: 'mine' });
    await expect(manager.client.get(configMapType, { namespace: ns, name: 'mine' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await manager.client.list(configMapType, { namespace: ns })).toEqual([]);
    await settle(clock);
    await expect(manager.client.get(configMapType, { namespace: ns, name: 'mine' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    abort.abort();
    await run;
  });
});
