import { describe, expect, it } from 'vitest';
import type { Clock } from '../clock/index.ts';
import { PausableClock, VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { LeaderStalledError } from './errors.ts';
import type { LeaderLock } from './lock.ts';
import { MemoryLock } from './memory-lock.ts';
import { runReplica } from './test-harness.ts';

/** A locker that counts its calls. */
function counted(inner: LeaderLock): LeaderLock & { calls: number } {
  const lock = {
    calls: 0,
    identity: inner.identity,
    describe: () => inner.describe(),
    get: (signal: AbortSignal) => {
      lock.calls++;
      return inner.get(signal);
    },
    create: (record: Parameters<LeaderLock['create']>[0], signal: AbortSignal) => {
      lock.calls++;
      return inner.create(record, signal);
    },
    update: (record: Parameters<LeaderLock['update']>[0], version: string, signal: AbortSignal) => {
      lock.calls++;
      return inner.update(record, version, signal);
    },
  };
  return lock;
}

/** Leader-gated work that acts every second, but only after checking `isLeader`, as writers should. */
function actor(elector: LeaderElector, clock: Clock, base: Clock, actions: { who: string; at: number }[]) {
  return async (signal: AbortSignal): Promise<void> => {
    while (!signal.aborted) {
      await clock.sleep(1_000, signal).catch(() => {});
      if (elector.isLeader) actions.push({ who: elector.identity, at: base.now() });
    }
  };
}

function setup() {
  const base = new VirtualClock();
  const stallable = new PausableClock(base);
  const shared = new MemoryLock();
  const lockA = counted(shared.locker('a'));
  const a = new LeaderElector({ lock: lockA, clock: stallable });
  const b = new LeaderElector({ lock: shared.locker('b'), clock: base });
  return { base, stallable, shared, lockA, a, b };
}

describe('LeaderElector watchdog', () => {
  it('steps down after a stall past the renew deadline before its next renewal touches the lock', async () => {
    const { base, stallable, lockA, a, b } = setup();
    const ra = runReplica(a, stallable);
    await base.advance(0);
    const rb = runReplica(b, base);
    await base.advance(4_500); // a renewed at 2 s and 4 s
    stallable.pause();
    await base.advance(30_000); // a's loop is blocked; b takes over after the lease duration
    expect(b.isLeader).toBe(true);
    const callsBefore = lockA.calls;
    await stallable.resume();
    await base.advance(0);
    expect(lockA.calls).toBe(callsBefore);
    const reason = ra.intervals[0]?.reason as LeaderStalledError;
    expect(reason).toBeInstanceOf(LeaderStalledError);
    expect(reason.elapsedMs).toBe(34_500 - 4_000);
    expect(ra.intervals[0]?.end).toBe(34_500);
    expect(ra.outcome).toBe(reason);
    rb.stop.abort();
    await rb.done;
  });

  it('never lets leader-gated work that checks isLeader act after a stall, even when its timer runs before the deadline timer', async () => {
    const { base, stallable, a, b } = setup();
    const actions: { who: string; at: number }[] = [];
    const ra = runReplica(a, stallable, actor(a, stallable, base, actions));
    await base.advance(0);
    const rb = runReplica(b, base, actor(b, base, base, actions));
    await base.advance(4_500);
    stallable.pause();
    await base.advance(30_000);
    await stallable.resume();
    await base.advance(5_000);
    const lastA = Math.max(...actions.filter((x) => x.who === 'a').map((x) => x.at));
    const firstB = Math.min(...actions.filter((x) => x.who === 'b').map((x) => x.at));
    expect(lastA).toBe(4_000);
    expect(firstB).toBeGreaterThanOrEqual(4_000 + 15_000);
    expect(actions.filter((x) => x.who === 'a' && x.at > 4_000 + 10_000)).toEqual([]);
    rb.stop.abort();
    await Promise.all([ra.done, rb.done]);
  });

  it('reports isLeader false and aborts the leading signal as soon as the clock passes the deadline, while its timers are still held', async () => {
    const { base, stallable, a } = setup();
    const ra = runReplica(a, stallable);
    await base.advance(4_500);
    stallable.pause();
    await base.advance(9_400);
    expect(a.isLeader).toBe(true);
    expect(ra.intervals[0]?.end).toBeUndefined();
    await base.advance(200);
    expect(a.isLeader).toBe(false);
    expect(ra.intervals[0]?.end).toBe(14_100);
    expect(ra.intervals[0]?.reason).toBeInstanceOf(LeaderStalledError);
    await stallable.resume();
    await base.advance(0);
    expect(ra.settled).toBe(true);
  });

  it('keeps leadership through a stall shorter than the renew deadline', async () => {
    const { base, stallable, a } = setup();
    const ra = runReplica(a, stallable);
    await base.advance(4_500);
    stallable.pause();
    await base.advance(9_000);
    await stallable.resume();
    await base.advance(10_000);
    expect(a.isLeader).toBe(true);
    expect(ra.intervals).toHaveLength(1);
    ra.stop.abort();
    await ra.done;
  });

  it('steps down when the clock goes backwards, since the time left on the lease is then unknown', async () => {
    const { base, stallable, a } = setup();
    const ra = runReplica(a, stallable);
    await base.advance(3_000);
    stallable.jump(-5_000);
    await base.advance(1_000);
    const reason = ra.intervals[0]?.reason as LeaderStalledError;
    expect(reason).toBeInstanceOf(LeaderStalledError);
    expect(reason.elapsedMs).toBeLessThan(0);
    expect(a.isLeader).toBe(false);
  });
});
