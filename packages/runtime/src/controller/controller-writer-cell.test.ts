/**
 * Which run a write is recorded as, now that a worker keeps one writer cell for all its runs
 * instead of a frame per run: concurrent workers, a write a run issues and does not await, and a
 * run that is abandoned and writes late.
 */
import { describe, expect, it } from 'vitest';
import { type Backend, resourceType } from '../backend/index.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done, type ReconcileContext } from '../reconcile/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import type { Cause, CauseWriter } from '../workqueue/index.ts';
import type { ControllerOptions } from './options.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
type Widget = KubeObject & { status?: { n?: number } };
const widget = (name: string): Widget =>
  ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'ns', generation: 1 },
  }) as Widget;

interface Run {
  readonly key: string;
  readonly id: string;
  readonly causes: readonly Cause[];
}

/** `backend` whose status writes are answered `delayMs` (virtual) after they are sent. */
function slowStatusWrites(backend: FakeBackend, clock: VirtualClock, delayMs: number): Backend {
  return new Proxy(backend, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'updateStatus') return value.bind(target);
      return async (...args: unknown[]) => {
        await clock.sleep(delayMs);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as unknown as Backend;
}

function setup(
  names: string[],
  reconcile: (
    key: ObjectKey,
    context: ReconcileContext,
    t: { manager: Manager; clock: VirtualClock },
  ) => Promise<void>,
  options: Partial<ControllerOptions<ObjectKey>> = {},
  statusDelayMs = 0,
) {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 7) });
  const fake = new FakeBackend({ clock });
  for (const name of names) fake.set(widgets, widget(name));
  const backend = statusDelayMs === 0 ? fake : slowStatusWrites(fake, clock, statusDelayMs);
  const manager = new Manager({ clock, backend });
  const runs: Run[] = [];
  manager
    .controller(widgets)
    .named('widgets')
    .withOptions(options)
    .complete(async (key, context) => {
      runs.push({ key: `${key.namespace}/${key.name}`, id: context.reconcileId, causes: context.causes });
      await reconcile(key, context, { manager, clock });
      return done();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  return {
    clock,
    runs,
    async advance(ms: number) {
      await settle(20);
      await clock.advance(ms);
      await settle(20);
    },
    async finish() {
      stop.abort();
      await running;
    },
  };
}

/** The writer named by the echo a run of `key` got (the first run whose causes name one). */
function echoWriter(runs: readonly Run[], key: string): CauseWriter | undefined {
  for (const run of runs) {
    if (run.key !== key) continue;
    const writer = run.causes.find((c) => c.writtenBy !== undefined)?.writtenBy;
    if (writer !== undefined) return writer;
  }
  return undefined;
}

const bump = async (manager: Manager, key: ObjectKey): Promise<void> => {
  const w = await manager.client.get<Widget>(widgets, key);
  if ((w.status?.n ?? 0) >= 1) return;
  await manager.client.updateStatus(widgets, { ...w, status: { n: 1 } });
};

describe('the run a write is recorded as', () => {
  it('with concurrent workers, each echo names the run of its own key', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const t = setup(
      names,
      async (key, _context, { manager, clock }) => {
        // the runs overlap: each waits a different time before it writes
        await clock.sleep(10 * (names.indexOf(key.name) + 1));
        await bump(manager, key);
      },
      { maxConcurrentReconciles: 4 },
    );
    await t.advance(200);
    for (const name of names) {
      const first = t.runs.find((r) => r.key === `ns/${name}`) as Run;
      expect(echoWriter(t.runs, `ns/${name}`), name).toMatchObject({
        key: `ns/${name}`,
        reconcileId: first.id,
      });
    }
    await t.finish();
  });

  it('a write a run issues and does not await is its own, though its answer comes while the worker runs another key', async () => {
    const t = setup(
      ['a', 'b'],
      async (key, _context, { manager, clock }) => {
        if (key.name === 'a') {
          const w = await manager.client.get<Widget>(widgets, key);
          // answered 50 ms from now, by when this run has returned and b's run is the worker's
          if ((w.status?.n ?? 0) === 0) void manager.client.updateStatus(widgets, { ...w, status: { n: 1 } });
          return;
        }
        await clock.sleep(100);
      },
      { maxConcurrentReconciles: 1 },
      50,
    );
    await t.advance(300);
    const firstA = t.runs.find((r) => r.key === 'ns/a') as Run;
    expect(t.runs.map((r) => r.key).slice(0, 2)).toEqual(['ns/a', 'ns/b']);
    expect(echoWriter(t.runs, 'ns/a')).toMatchObject({ key: 'ns/a', reconcileId: firstA.id });
    await t.finish();
  });

  it("an abandoned run's late write is its own; the worker's later runs write as themselves", async () => {
    const t = setup(
      ['a', 'b'],
      async (key, _context, { manager, clock }) => {
        if (key.name === 'a') {
          const w = await manager.client.get<Widget>(widgets, key);
          if ((w.status?.n ?? 0) > 0) return;
          await clock.sleep(1_000); // ignores its signal: abandoned after 100 + 50 ms
          await manager.client.updateStatus(widgets, { ...w, status: { n: 1 } });
          return;
        }
        await clock.sleep(200); // b runs on the same worker, after a was abandoned
        await bump(manager, key);
      },
      { maxConcurrentReconciles: 1, reconcileTimeoutMs: 100, abandonGraceMs: 50 },
    );
    await t.advance(2_000);
    const firstA = t.runs.find((r) => r.key === 'ns/a') as Run;
    const firstB = t.runs.find((r) => r.key === 'ns/b') as Run;
    expect(echoWriter(t.runs, 'ns/b')).toMatchObject({ key: 'ns/b', reconcileId: firstB.id });
    expect(echoWriter(t.runs, 'ns/a')).toMatchObject({ key: 'ns/a', reconcileId: firstA.id });
    await t.finish();
  });
});
