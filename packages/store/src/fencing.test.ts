import {
  type ConfigMap,
  configMapType,
  FencedError,
  LeaderElector,
  LeadershipLostError,
  Manager,
  MemoryLock,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Store } from './store.ts';

const cm = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data: { name },
});

function replica(identity: string, lock: MemoryLock, clock: VirtualClock, store: Store) {
  const elector = new LeaderElector({ lock: lock.locker(identity), clock });
  const manager = new Manager({ clock, leaderElection: elector, backend: store });
  manager.add((signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())), {
    name: 'gated',
  });
  const stop = new AbortController();
  const done = manager.start(stop.signal).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { elector, manager, stop, done };
}

describe('a leader term fences the writes made for it', () => {
  it('announces its fence before leader-gated work starts; a paused former leader’s later writes are refused', async () => {
    const clock = new VirtualClock();
    const lock = new MemoryLock({ name: 'default/op' });
    const store = new Store({ clock, types: [configMapType] });
    const a = replica('a', lock, clock, store);
    await clock.advance(0);
    const b = replica('b', lock, clock, store);
    await clock.advance(3_000);
    expect(a.manager.leading).toBe(true);
    expect(a.manager.fence).toEqual({ name: 'default/op', holder: 'a', epoch: 0 });
    expect(store.fenceMarks()).toEqual([{ name: 'default/op', holder: 'a', epoch: 0 }]);
    await a.manager.client.create(configMapType, cm('by-a'));

    // a stops renewing (paused, partitioned): its term ends, b takes over with a higher epoch
    lock.inject({ type: 'hang' }, { identity: 'a', count: 1_000 });
    await clock.advance(30_000);
    expect(await a.done).toBeInstanceOf(LeadershipLostError);
    expect(b.manager.leading).toBe(true);
    expect(b.manager.fence).toEqual({ name: 'default/op', holder: 'b', epoch: 1 });
    expect(store.fenceMarks()).toEqual([{ name: 'default/op', holder: 'b', epoch: 1 }]);

    // whatever a still sends carries its old fence and is refused, whichever write it is
    const stale = [
      a.manager.client.create(configMapType, cm('late')),
      a.manager.client.patch(
        configMapType,
        { namespace: 'default', name: 'by-a' },
        { type: 'merge', patch: { data: { x: '1' } } },
      ),
      a.manager.client.delete(configMapType, { namespace: 'default', name: 'by-a' }),
    ];
    for (const write of stale) {
      const error = await write.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FencedError);
      expect((error as FencedError).current).toEqual({ name: 'default/op', holder: 'b', epoch: 1 });
      expect((error as FencedError).retryable).toBe(false);
    }
    expect((await store.get<ConfigMap>(configMapType, { namespace: 'default', name: 'by-a' })).data).toEqual({
      name: 'by-a',
    });
    await b.manager.client.create(configMapType, cm('by-b'));
    b.stop.abort();
    expect(await b.done).toBeUndefined();
  });

  it('a Lease whose transitions restarted (deleted by hand) leads at an epoch above the store’s mark: its lock is raised first', async () => {
    const clock = new VirtualClock();
    const store = new Store({ clock, types: [configMapType] });
    await store.announceFence({ name: 'default/op', holder: 'old', epoch: 7 });
    const lock = new MemoryLock({ name: 'default/op' });
    const a = replica('a', lock, clock, store);
    await clock.advance(3_000);
    expect(a.manager.leading).toBe(true);
    expect(a.manager.fence).toEqual({ name: 'default/op', holder: 'a', epoch: 8 });
    expect(store.fenceMarks()).toEqual([{ name: 'default/op', holder: 'a', epoch: 8 }]);
    expect(a.elector.observedRecord?.leaderTransitions).toBe(8);
    expect((await lock.locker('x').get(new AbortController().signal))?.record.leaderTransitions).toBe(8);
    // the old holder's writes are refused; the new leader's land
    await expect(
      store.create(configMapType, cm('stale'), { fence: { name: 'default/op', holder: 'old', epoch: 7 } }),
    ).rejects.toBeInstanceOf(FencedError);
    await a.manager.client.create(configMapType, cm('by-a'));
    // the next holder counts on from there
    lock.inject({ type: 'hang' }, { identity: 'a', count: 1_000 });
    const b = replica('b', lock, clock, store);
    await clock.advance(30_000);
    expect(await a.done).toBeInstanceOf(LeadershipLostError);
    expect(b.manager.fence).toEqual({ name: 'default/op', holder: 'b', epoch: 9 });
    b.stop.abort();
    expect(await b.done).toBeUndefined();
  });

  it('a leader that cannot raise its lock (someone else wrote it) stops rather than act unfenced', async () => {
    const clock = new VirtualClock();
    const store = new Store({ clock, types: [configMapType] });
    await store.announceFence({ name: 'default/op', holder: 'old', epoch: 7 });
    const lock = new MemoryLock({ name: 'default/op' });
    // every update of a's fails (a conflict), so the raise fails
    lock.inject({ type: 'error' }, { identity: 'a', operations: ['update'], count: 1_000 });
    const a = replica('a', lock, clock, store);
    await clock.advance(3_000);
    expect(a.manager.leading).toBe(false);
    expect(await a.done).toBeInstanceOf(Error);
  });
});

describe('the store’s fence marks', () => {
  it('only ever rise, and a write is accepted exactly when its epoch is above the mark or equal with the same holder', async () => {
    const op = fc.record({
      announce: fc.boolean(),
      holder: fc.constantFrom('a', 'b', 'c'),
      epoch: fc.integer({ min: 0, max: 6 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const store = new Store({ types: [configMapType] });
        let mark: { holder: string; epoch: number } | undefined;
        let i = 0;
        for (const { announce, holder, epoch } of ops) {
          const fence = { name: 'n', holder, epoch };
          const expected =
            mark === undefined || epoch > mark.epoch || (epoch === mark.epoch && holder === mark.holder);
          const accepted = async (write: Promise<unknown>): Promise<boolean> => {
            try {
              await write;
              return true;
            } catch (error) {
              if (error instanceof FencedError) return false;
              throw error;
            }
          };
          const outcome = accepted(
            announce ? store.announceFence(fence) : store.create(configMapType, cm(`c${i++}`), { fence }),
          );
          expect(await outcome).toBe(expected);
          if (expected && (mark === undefined || epoch > mark.epoch)) mark = { holder, epoch };
          expect(store.fenceMarks()).toEqual(mark === undefined ? [] : [{ name: 'n', ...mark }]);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('malformed fences are typed BadRequest errors and write nothing', async () => {
    const store = new Store({ types: [configMapType] });
    for (const fence of [
      { name: '', holder: 'a', epoch: 0 },
      { name: 'n', holder: '', epoch: 0 },
      { name: 'n', holder: 'a', epoch: -1 },
      { name: 'n', holder: 'a', epoch: Number.NaN },
      null,
    ]) {
      const error = await store
        .create(configMapType, cm('x'), { fence: fence as never })
        .catch((e: unknown) => e);
      expect((error as { reason?: string }).reason).toBe('BadRequest');
    }
    expect((await store.list(configMapType)).items).toEqual([]);
  });
});
