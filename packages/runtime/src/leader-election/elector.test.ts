import { describe, expect, it } from 'vitest';
import { AbortedError, AlreadyStartedError, OptionsError } from '../errors.ts';
import { MemoryLogger } from '../log/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { LeaderLostError, LeaderSupersededError } from './errors.ts';
import type { LeaderLock } from './lock.ts';
import { MemoryLock } from './memory-lock.ts';
import type { LeaderElectorOptions } from './options.ts';
import { formatMicroTime, parseMicroTime } from './record.ts';
import { firstOverlap, RateClock, type Replica, runReplica } from './test-harness.ts';

function setup(names: readonly string[], options: Partial<LeaderElectorOptions> = {}) {
  const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
  const lock = new MemoryLock();
  const electors = names.map((id) => new LeaderElector({ lock: lock.locker(id), clock, ...options }));
  return { clock, lock, electors };
}

const leaders = (replicas: readonly Replica[]): string[] =>
  replicas.filter((r) => r.elector.isLeader).map((r) => r.elector.identity);

const renewedAt = (lock: MemoryLock): number =>
  parseMicroTime(lock.current?.record.renewTime ?? '') ?? Number.NaN;

describe('LeaderElector', () => {
  it('creates the record and leads at once when there is none, with fencing token 0', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(0);
    expect(a.elector.isLeader).toBe(true);
    expect(a.elector.phase).toBe('leading');
    expect(a.elector.fencingToken).toBe(0);
    expect(a.newLeaders).toEqual(['a']);
    expect(lock.current?.record).toEqual({
      holderIdentity: 'a',
      leaseDurationMs: 15_000,
      acquireTime: formatMicroTime(clock.now()),
      renewTime: formatMicroTime(clock.now()),
      leaderTransitions: 0,
    });
    a.stop.abort();
    await a.done;
  });

  it('raises its fencing token by rewriting the record it holds; not while standing by, never down, never to a bad number', async () => {
    const { clock, lock, electors } = setup(['a', 'b']);
    const b = electors[1] as LeaderElector;
    await expect(b.raiseFencingToken(3)).rejects.toBeInstanceOf(AbortedError);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(0);
    const standby = runReplica(b, clock);
    await clock.advance(0);
    await expect(b.raiseFencingToken(3)).rejects.toBeInstanceOf(AbortedError);
    expect(await a.elector.raiseFencingToken(5)).toEqual({ name: 'memory', holder: 'a', epoch: 5 });
    expect(a.elector.fencingToken).toBe(5);
    expect(lock.current?.record).toMatchObject({ holderIdentity: 'a', leaderTransitions: 5 });
    expect(renewedAt(lock)).toBe(clock.now());
    // lower or equal: nothing written
    const calls = lock.calls;
    expect(await a.elector.raiseFencingToken(2)).toEqual({ name: 'memory', holder: 'a', epoch: 5 });
    expect(lock.calls).toBe(calls);
    await expect(a.elector.raiseFencingToken(-1)).rejects.toBeInstanceOf(OptionsError);
    await expect(a.elector.raiseFencingToken(Number.NaN)).rejects.toThrow(/min.*non-negative integer/);
    // renewals keep it, and the next holder counts on from it
    await clock.advance(10_000);
    expect(lock.current?.record.leaderTransitions).toBe(5);
    a.stop.abort();
    await a.done;
    await clock.advance(5_000);
    expect(b.isLeader).toBe(true);
    expect(b.fencingToken).toBe(6);
    standby.stop.abort();
    await standby.done;
  });

  it('renews every retry period, keeping acquireTime and transitions, and keeps leading past the lease duration', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(0);
    const acquired = lock.current?.record;
    const callsBefore = lock.calls;
    await clock.advance(60_000);
    expect(a.elector.isLeader).toBe(true);
    expect(lock.calls - callsBefore).toBe(30);
    expect(renewedAt(lock)).toBe(clock.now());
    expect(lock.current?.record.acquireTime).toBe(acquired?.acquireTime);
    expect(lock.current?.record.leaderTransitions).toBe(0);
    expect(a.intervals).toHaveLength(1);
    a.stop.abort();
    await a.done;
  });

  it('lets exactly one of three electors lead, and the others name it as leader', async () => {
    const { clock, electors } = setup(['a', 'b', 'c']);
    const replicas = electors.map((e) => runReplica(e, clock));
    await clock.advance(30_000);
    expect(leaders(replicas)).toEqual(['a']);
    for (const r of replicas) expect(r.elector.leader).toBe('a');
    for (const r of replicas) expect(r.newLeaders).toEqual(['a']);
    expect(replicas.filter((r) => r.elector.phase === 'standby')).toHaveLength(2);
    for (const r of replicas) r.stop.abort();
    await Promise.all(replicas.map((r) => r.done));
  });

  it("waits the record's lease duration on its own clock before taking a lock held by another, whatever the record's renewTime says", async () => {
    const { clock, lock, electors } = setup(['b']);
    lock.set({
      holderIdentity: 'gone',
      leaseDurationMs: 20_000,
      acquireTime: formatMicroTime(0),
      renewTime: formatMicroTime(0),
      leaderTransitions: 4,
    });
    const start = clock.now();
    const b = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(19_999);
    expect(b.elector.isLeader).toBe(false);
    expect(b.elector.leader).toBe('gone');
    await clock.advance(4_401);
    expect(b.elector.isLeader).toBe(true);
    expect(b.intervals[0]?.start).toBeGreaterThanOrEqual(start + 20_000);
    expect(b.elector.fencingToken).toBe(5);
    b.stop.abort();
    await b.done;
  });

  it('hands over within one jittered retry period when the leader stops and releases the lock', async () => {
    const { clock, lock, electors } = setup(['a', 'b']);
    const [a, b] = electors.map((e) => runReplica(e, clock)) as [Replica, Replica];
    await clock.advance(10_000);
    a.stop.abort();
    await clock.advance(0);
    const stoppedAt = clock.now();
    expect(await a.done).toBeUndefined();
    expect(a.stoppedLeading).toBe(1);
    expect(lock.current?.record).toMatchObject({
      holderIdentity: '',
      leaseDurationMs: 1000,
      leaderTransitions: 0,
    });
    await clock.advance(4_400);
    expect(b.elector.isLeader).toBe(true);
    expect(b.elector.fencingToken).toBe(1);
    expect((b.intervals[0]?.start ?? 0) - stoppedAt).toBeLessThanOrEqual(4_400);
    expect(firstOverlap([...a.intervals, ...b.intervals])).toBeUndefined();
    b.stop.abort();
    await b.done;
  });

  it('without releaseOnCancel, a standby takes over only a lease duration after the last renewal it saw', async () => {
    const { clock, lock, electors } = setup(['a', 'b'], { releaseOnCancel: false });
    const [a, b] = electors.map((e) => runReplica(e, clock)) as [Replica, Replica];
    await clock.advance(10_001);
    a.stop.abort();
    await a.done;
    const lastRenewal = renewedAt(lock);
    expect(lock.current?.record.holderIdentity).toBe('a');
    await clock.advanceTo(lastRenewal + 15_000 - 1);
    expect(b.elector.isLeader).toBe(false);
    await clock.advanceTo(lastRenewal + 15_000 + 2 * 2_200 + 2_000);
    expect(b.elector.isLeader).toBe(true);
    expect(firstOverlap([...a.intervals, ...b.intervals])).toBeUndefined();
    b.stop.abort();
    await b.done;
  });

  it('loses leadership by the renew deadline when renewals fail: the signal aborts with LeaderLostError and run rejects', async () => {
    const { clock, lock, electors } = setup(['a', 'b']);
    const [a, b] = electors.map((e) => runReplica(e, clock)) as [Replica, Replica];
    await clock.advance(5_000);
    lock.inject({ type: 'error' }, { identity: 'a', count: 1_000 });
    const lastRenewal = renewedAt(lock);
    await clock.advance(20_000);
    const interval = a.intervals[0];
    expect(interval?.end).toBe(lastRenewal + 10_000);
    expect(interval?.reason).toBeInstanceOf(LeaderLostError);
    expect(a.settled).toBe(true);
    expect(a.outcome).toBeInstanceOf(LeaderLostError);
    expect(a.stoppedLeading).toBe(1);
    expect(a.elector.phase).toBe('idle');
    expect(a.elector.fencingToken).toBeUndefined();
    expect(b.elector.isLeader).toBe(true);
    expect(b.intervals[0]?.start).toBeGreaterThanOrEqual(lastRenewal + 15_000);
    b.stop.abort();
    await b.done;
  });

  it('loses leadership at the renew deadline even when the renewal call hangs instead of failing', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(4_000);
    lock.inject({ type: 'hang' }, { count: 1_000 });
    const lastRenewal = renewedAt(lock);
    await clock.advance(30_000);
    expect(a.intervals[0]?.end).toBe(lastRenewal + 10_000);
    expect(a.outcome).toBeInstanceOf(LeaderLostError);
  });

  it('keeps leading through failed renewals when one succeeds before the deadline', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(0);
    lock.inject({ type: 'error' }, { count: 4 });
    await clock.advance(60_000);
    expect(a.elector.isLeader).toBe(true);
    expect(a.intervals).toHaveLength(1);
    a.stop.abort();
    await a.done;
  });

  it('steps down at once with LeaderSupersededError when the lock names another valid holder', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(3_000);
    lock.set({ ...(lock.current?.record ?? ({} as never)), holderIdentity: 'intruder' });
    await clock.advance(1_000);
    expect(a.intervals[0]?.end).toBe(clock.now());
    expect(a.intervals[0]?.reason).toBeInstanceOf(LeaderSupersededError);
    expect((a.outcome as LeaderSupersededError).holder).toBe('intruder');
  });

  it('counts a transition on every change of holder and exposes it as the fencing token while leading', async () => {
    const { clock, electors } = setup(['a', 'b']);
    const [ea, eb] = electors as [LeaderElector, LeaderElector];
    const tokens: (number | undefined)[] = [];
    let a = runReplica(ea, clock);
    await clock.advance(0);
    tokens.push(ea.fencingToken);
    const b = runReplica(eb, clock);
    a.stop.abort();
    await a.done;
    expect(ea.fencingToken).toBeUndefined();
    await clock.advance(5_000);
    tokens.push(eb.fencingToken);
    a = runReplica(ea, clock);
    b.stop.abort();
    await b.done;
    await clock.advance(5_000);
    tokens.push(ea.fencingToken);
    expect(tokens).toEqual([0, 1, 2]);
    a.stop.abort();
    await a.done;
  });

  it('takes its own unreleased record back at once after a restart, without counting a transition', async () => {
    const { clock, lock, electors } = setup(['a'], { releaseOnCancel: false });
    const first = runReplica(electors[0] as LeaderElector, clock);
    await clock.advance(3_000);
    first.stop.abort();
    await first.done;
    const again = runReplica(new LeaderElector({ lock: lock.locker('a'), clock }), clock);
    await clock.advance(0);
    expect(again.elector.isLeader).toBe(true);
    expect(again.elector.fencingToken).toBe(0);
    again.stop.abort();
    await again.done;
  });

  it('polls for the lock every retry period times a jitter in [1, 2.2) while standing by', async () => {
    const { clock, lock } = setup([]);
    const a = runReplica(new LeaderElector({ lock: lock.locker('a'), clock }), clock);
    await clock.advance(0);
    const inner = lock.locker('b');
    const polls: number[] = [];
    const counting: LeaderLock = {
      identity: 'b',
      describe: () => inner.describe(),
      get: (signal) => {
        polls.push(clock.now());
        return inner.get(signal);
      },
      create: (record, signal) => inner.create(record, signal),
      update: (record, version, signal) => inner.update(record, version, signal),
    };
    const b = runReplica(new LeaderElector({ lock: counting, clock }), clock);
    await clock.advance(100_000);
    const gaps = polls.slice(1).map((t, i) => t - (polls[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...gaps)).toBeLessThan(4_400);
    expect(new Set(gaps).size).toBeGreaterThan(10);
    expect(b.elector.isLeader).toBe(false);
    for (const r of [a, b]) r.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  it('awaits leader-gated work before releasing, so no standby starts while it still runs', async () => {
    const { clock, lock, electors } = setup(['a', 'b']);
    let workEnded = 0;
    const a = runReplica(electors[0] as LeaderElector, clock, async (signal) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      await clock.sleep(3_000);
      workEnded = clock.now();
    });
    await clock.advance(0);
    const b = runReplica(electors[1] as LeaderElector, clock);
    await clock.advance(1_000);
    a.stop.abort();
    await clock.advance(2_999);
    expect(lock.current?.record.holderIdentity).toBe('a');
    await clock.advance(1);
    expect(lock.current?.record.holderIdentity).toBe('');
    await clock.advance(4_400);
    expect(b.intervals[0]?.start).toBeGreaterThanOrEqual(workEnded);
    b.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  it('does not release when leader-gated work is still running at the renew deadline', async () => {
    const { clock, lock, electors } = setup(['a']);
    const a = runReplica(electors[0] as LeaderElector, clock, () => new Promise<void>(() => {}));
    await clock.advance(1_000);
    a.stop.abort();
    await clock.advance(20_000);
    expect(a.settled).toBe(true);
    expect(lock.current?.record.holderIdentity).toBe('a');
  });

  it('resolves acquire() with the leading signal, which aborts with LeaderLostError on loss', async () => {
    const { clock, lock, electors } = setup(['a']);
    const elector = electors[0] as LeaderElector;
    const stop = new AbortController();
    const acquired = elector.acquire(stop.signal);
    await clock.advance(0);
    const leading = await acquired;
    expect(leading.aborted).toBe(false);
    lock.inject({ type: 'error' }, { count: 1_000 });
    await clock.advance(12_000);
    expect(leading.reason).toBeInstanceOf(LeaderLostError);
  });

  it('rejects acquire() with AbortedError when stopped before leading', async () => {
    const { clock, lock, electors } = setup(['b']);
    lock.set({
      holderIdentity: 'a',
      leaseDurationMs: 15_000,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
    });
    const stop = new AbortController();
    const acquired = (electors[0] as LeaderElector).acquire(stop.signal).catch((e: unknown) => e);
    await clock.advance(5_000);
    stop.abort();
    expect(await acquired).toBeInstanceOf(AbortedError);
  });

  it('refuses a second concurrent run with AlreadyStartedError, and runs again after the first settled', async () => {
    const { clock, electors } = setup(['a']);
    const elector = electors[0] as LeaderElector;
    const first = runReplica(elector, clock);
    await expect(elector.run(new AbortController().signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    first.stop.abort();
    await first.done;
    const second = runReplica(elector, clock);
    await clock.advance(0);
    expect(elector.isLeader).toBe(true);
    second.stop.abort();
    await second.done;
  });

  it('logs callbacks that throw and keeps electing', async () => {
    const clock = new VirtualClock();
    const logger = new MemoryLogger();
    const elector = new LeaderElector({ lock: new MemoryLock().locker('a'), clock, logger });
    const stop = new AbortController();
    const run = elector.run(stop.signal, {
      onNewLeader: () => {
        throw new Error('bad callback');
      },
      onStartedLeading: () => {
        throw new Error('bad work');
      },
    });
    await clock.advance(10_000);
    expect(elector.isLeader).toBe(true);
    expect(logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([
      'Leader election callback failed',
      'Leader-gated work failed',
    ]);
    stop.abort();
    await run;
  });

  it('tolerates a leader clock slower than the standby by less than leaseDuration / renewDeadline, and not by more', async () => {
    const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 200 };
    const overlapWithLeaderRate = async (rate: number): Promise<boolean> => {
      const base = new VirtualClock();
      const lock = new MemoryLock();
      const slow = new RateClock(base, rate);
      // Intervals are recorded on the base clock: real time.
      const a = runReplica(new LeaderElector({ lock: lock.locker('a'), clock: slow, ...timing }), base);
      await base.advance(0);
      const b = runReplica(new LeaderElector({ lock: lock.locker('b'), clock: base, ...timing }), base);
      await base.advance(3_000);
      lock.inject({ type: 'error' }, { identity: 'a', count: 10_000 });
      await base.advance(30_000);
      expect(a.outcome).toBeInstanceOf(LeaderLostError);
      expect(b.elector.isLeader).toBe(true);
      b.stop.abort();
      await b.done;
      return firstOverlap([...a.intervals, ...b.intervals]) !== undefined;
    };
    expect(await overlapWithLeaderRate(1 / 1.4)).toBe(false);
    expect(await overlapWithLeaderRate(1 / 1.6)).toBe(true);
  });
});
