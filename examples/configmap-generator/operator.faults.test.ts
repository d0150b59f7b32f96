import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Backend,
  type ConfigMap,
  configMapType,
  Manager,
  namespaceType,
  type ResourceType,
  type WatchEvent,
  type WatchOptions,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';
import configMapGenerator, { type ConfigMapGenerator, generatorType } from './operator.ts';

const ns = 'default';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openStore(clock: VirtualClock, dataDir?: string): Store {
  return new Store({
    clock,
    types: [namespaceType, generatorType, configMapType],
    ...(dataDir ? { dataDir } : {}),
  });
}

/** A backend whose methods can be intercepted: `before(method)` may throw to inject a crash; `dropEvent` filters watch events. */
function faulty(
  inner: Backend,
  hooks: {
    before?: (method: string, type: ResourceType) => void;
    dropEvent?: (type: ResourceType, e: WatchEvent) => boolean;
  },
): Backend {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'watch') {
        return (type: ResourceType, options?: WatchOptions) => ({
          async *[Symbol.asyncIterator]() {
            for await (const event of target.watch(type, options)) {
              if (!hooks.dropEvent?.(type, event)) yield event;
            }
          },
        });
      }
      return (type: ResourceType, ...args: unknown[]) => {
        hooks.before?.(String(prop), type);
        return (value as (...a: unknown[]) => unknown).apply(target, [type, ...args]);
      };
    },
  });
}

async function run(clock: VirtualClock, backend: Backend, until: () => Promise<boolean>, maxRounds = 400) {
  const manager = new Manager({ clock, backend, gracefulShutdownTimeoutMs: 1000 });
  configMapGenerator(manager);
  const abort = new AbortController();
  const done = manager.start(abort.signal).catch((e: unknown) => e);
  let ok = false;
  for (let i = 0; i < maxRounds && !ok; i++) {
    await clock.advance(25);
    ok = await until();
  }
  abort.abort();
  await clock.advance(1000);
  return { ok, result: await done };
}

async function converged(
  store: Store,
  name: string,
  copies: number,
  data: Record<string, string>,
): Promise<boolean> {
  const list = await store.list<ConfigMap>(configMapType, { namespace: ns });
  const mine = list.items.filter((c) => c.metadata.ownerReferences?.some((r) => r.name === name));
  if (mine.length !== copies || !mine.every((c) => JSON.stringify(c.data) === JSON.stringify(data)))
    return false;
  const g = await store.get<ConfigMapGenerator>(generatorType, { namespace: ns, name });
  return (
    g.status?.observedGeneration === g.metadata.generation && g.status?.conditions?.[0]?.status === 'True'
  );
}

const generator = (name: string, copies: number, data: Record<string, string>): ConfigMapGenerator => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'ConfigMapGenerator',
  metadata: { name, namespace: ns },
  spec: { data, copies },
});

describe('ConfigMap generator on the store, under faults', () => {
  it('survives a crash between two of its writes: after a restart from the data directory it converges', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-e2e-'));
    dirs.push(dir);
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    let store = openStore(clock, dir);
    await store.create(namespaceType, { metadata: { name: ns } });
    await store.create(generatorType, generator('g', 3, { a: '1' }));
    let creates = 0;
    let crashed = false;
    const crashing = faulty(store, {
      before: (method, type) => {
        if (crashed) throw new Error('process is dead');
        if (method === 'create' && type.kind === 'ConfigMap' && ++creates === 2) {
          crashed = true;
          throw new Error('crash between two writes');
        }
      },
    });
    const first = await run(clock, crashing, async () => crashed);
    expect(first.ok).toBe(true);
    expect((await store.list(configMapType, { namespace: ns })).items).toHaveLength(1);
    await store.close();

    store = openStore(clock, dir);
    const second = await run(clock, store, () => converged(store, 'g', 3, { a: '1' }));
    expect(second.ok).toBe(true);
    await store.close();
  });

  it('converges when intermediate events are never delivered: it acts on the state it reads, not on events', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const store = openStore(clock);
    await store.create(namespaceType, { metadata: { name: ns } });
    await store.create(generatorType, generator('g', 1, { v: '0' }));
    let deliverFrom = Number.POSITIVE_INFINITY;
    const lossy = faulty(store, {
      dropEvent: (type, e) =>
        type.kind === 'ConfigMapGenerator' &&
        e.type === 'MODIFIED' &&
        Number(e.object.metadata.generation) < deliverFrom,
    });
    const manager = new Manager({ clock, backend: lossy });
    configMapGenerator(manager);
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    for (let i = 0; i < 40; i++) await clock.advance(25);
    expect(await converged(store, 'g', 1, { v: '0' })).toBe(true);
    // Five spec changes; the watch loses the first four.
    for (let v = 1; v <= 5; v++) {
      const g = await store.get<ConfigMapGenerator>(generatorType, { namespace: ns, name: 'g' });
      if (v === 5) deliverFrom = (g.metadata.generation ?? 0) + 1;
      await store.update(generatorType, { ...g, spec: { data: { v: String(v) }, copies: v } });
      await clock.advance(1);
    }
    let ok = false;
    for (let i = 0; i < 400 && !ok; i++) {
      await clock.advance(25);
      ok = await converged(store, 'g', 5, { v: '5' });
    }
    expect(ok).toBe(true);
    abort.abort();
    await running;
    await store.close();
  });
});
