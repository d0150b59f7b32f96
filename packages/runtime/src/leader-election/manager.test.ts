import { describe, expect, it } from 'vitest';
import { LeadershipLostError, Manager } from '../manager/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { LeaderLostError } from './errors.ts';
import { MemoryLock } from './memory-lock.ts';
import { firstOverlap, type Interval } from './test-harness.ts';

/** A manager whose one leader-gated runnable records when it runs, and one runnable for every replica. */
function replica(
  identity: string,
  lock: MemoryLock,
  clock: VirtualClock,
  log: Interval[],
  everywhere: string[],
) {
  const elector = new LeaderElector({ lock: lock.locker(identity), clock });
  const manager = new Manager({ clock, leaderElection: elector });
  manager.add(
    (signal) =>
      new Promise<void>((resolve) => {
        const interval: Interval = { identity, start: clock.now(), end: undefined, reason: undefined };
        log.push(interval);
        signal.addEventListener('abort', () => {
          interval.end = clock.now();
          resolve();
        });
      }),
    { name: 'controller' },
  );
  manager.add(
    (signal) =>
      new Promise<void>((resolve) => {
        everywhere.push(identity);
        signal.addEventListener('abort', () => resolve());
      }),
    { group: 'others', name: 'metrics' },
  );
  const stop = new AbortController();
  const done = manager.start(stop.signal).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { elector, manager, stop, done };
}

describe('LeaderElector with the Manager', () => {
  it('starts leader-gated runnables only on the leader, and on the standby once the leader stops', async () => {
    const clock = new VirtualClock();
    const lock = new MemoryLock();
    const log: Interval[] = [];
    const everywhere: string[] = [];
    const a = replica('a', lock, clock, log, everywhere);
    await clock.advance(0);
    const b = replica('b', lock, clock, log, everywhere);
    await clock.advance(10_000);
    expect(everywhere.sort()).toEqual(['a', 'b']);
    expect(log.map((i) => i.identity)).toEqual(['a']);
    expect(a.manager.leading).toBe(true);
    expect(b.manager.leading).toBe(false);
    a.stop.abort();
    expect(await a.done).toBeUndefined();
    await clock.advance(4_400);
    expect(log.map((i) => i.identity)).toEqual(['a', 'b']);
    expect(b.manager.leading).toBe(true);
    expect(firstOverlap(log)).toBeUndefined();
    b.stop.abort();
    expect(await b.done).toBeUndefined();
  });

  it('stops the manager with LeadershipLostError, leader-gated work aborted by the renew deadline, when renewals fail', async () => {
    const clock = new VirtualClock();
    const lock = new MemoryLock();
    const log: Interval[] = [];
    const a = replica('a', lock, clock, log, []);
    await clock.advance(6_000);
    lock.inject({ type: 'hang' }, { count: 1_000 });
    await clock.advance(20_000);
    const error = (await a.done) as LeadershipLostError;
    expect(error).toBeInstanceOf(LeadershipLostError);
    expect(error.cause).toBeInstanceOf(LeaderLostError);
    expect(log[0]?.end).toBe(6_000 + 10_000);
    expect(a.manager.state).toBe('stopped');
    expect(a.elector.isLeader).toBe(false);
  });
});
