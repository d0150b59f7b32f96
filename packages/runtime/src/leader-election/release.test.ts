import { describe, expect, it } from 'vitest';
import { MemoryLogger } from '../log/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { MemoryLock } from './memory-lock.ts';
import {
  firstOverlap,
  InFlightLocker,
  type InFlightWrite,
  type Replica,
  runReplica,
} from './test-harness.ts';

/** The two-process soak's timings: a hand-over should take one jittered retry period at most. */
const timing = { leaseDurationMs: 1_000, renewDeadlineMs: 700, retryPeriodMs: 100 };
const HAND_OVER_MS = 2.2 * timing.retryPeriodMs;

/** Leader `a` (renewing at +100, +200, …) and standby `b`; `a`'s renewal at +300 is left in flight. */
async function renewalInFlight() {
  const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
  const shared = new MemoryLock();
  const logger = new MemoryLogger();
  const lock = new InFlightLocker(shared, 'a');
  const leader = runReplica(new LeaderElector({ lock, clock, logger, ...timing }), clock);
  await clock.advance(0);
  const acquired = shared.current?.record;
  const standby = runReplica(new LeaderElector({ lock: shared.locker('b'), clock, ...timing }), clock);
  await clock.advance(250);
  lock.hold();
  await clock.advance(100);
  expect(lock.held).toHaveLength(1);
  const renewal = lock.held[0] as InFlightWrite;
  return { clock, shared, logger, leader, standby, acquired, renewal };
}

const messages = (logger: MemoryLogger): string[] => logger.records.map((r) => r.message);

async function expectHandOver(clock: VirtualClock, leader: Replica, standby: Replica): Promise<void> {
  const stoppedAt = clock.now();
  await clock.advance(HAND_OVER_MS);
  expect(standby.elector.isLeader).toBe(true);
  // A release keeps leaderTransitions; the standby's acquisition counts the change of holder.
  expect(standby.elector.fencingToken).toBe(1);
  expect((standby.intervals[0]?.start ?? Number.NaN) - stoppedAt).toBeLessThanOrEqual(HAND_OVER_MS);
  expect(firstOverlap([...leader.intervals, ...standby.intervals])).toBeUndefined();
  standby.stop.abort();
  await standby.done;
}

describe('Release on stop with a renewal in flight', () => {
  it('releases when the abandoned renewal lands on the server before the release: re-reads, sees its own record, releases that version', async () => {
    const { clock, shared, logger, leader, standby, acquired, renewal } = await renewalInFlight();
    leader.stop.abort();
    // The request was already sent: it lands while the client gives up on it.
    expect(renewal.land()).toBeDefined();
    expect(await leader.done).toBeUndefined();
    expect(shared.current?.record).toMatchObject({
      holderIdentity: '',
      leaseDurationMs: 1_000,
      leaderTransitions: acquired?.leaderTransitions,
    });
    expect(leader.elector.leader).toBeUndefined();
    expect(leader.stoppedLeading).toBe(1);
    expect(messages(logger)).toContain('Released leader lease');
    expect(messages(logger)).not.toContain('Failed to release leader lease');
    await expectHandOver(clock, leader, standby);
  });

  it('releases when the abandoned renewal lands after the release, which then wins: the renewal conflicts', async () => {
    const { clock, shared, leader, standby, renewal } = await renewalInFlight();
    leader.stop.abort();
    expect(await leader.done).toBeUndefined();
    expect(renewal.land()).toBeUndefined();
    expect(shared.current?.record.holderIdentity).toBe('');
    await expectHandOver(clock, leader, standby);
  });

  it('leaves the record alone when another identity wrote it meanwhile', async () => {
    const { shared, logger, leader, standby, acquired, renewal } = await renewalInFlight();
    const intruder = { ...(acquired ?? ({} as never)), holderIdentity: 'c', leaderTransitions: 7 };
    leader.stop.abort();
    shared.set(intruder);
    expect(await leader.done).toBeUndefined();
    expect(renewal.land()).toBeUndefined();
    expect(shared.current?.record).toEqual(intruder);
    expect(messages(logger)).toContain('Leader lease changed hands before release; left alone');
    standby.stop.abort();
    await standby.done;
  });

  it('gives up on the release at the renew deadline when the re-read after the conflict never answers', async () => {
    const { clock, shared, leader, standby, renewal } = await renewalInFlight();
    const deadline = clock.now() - 150 + timing.renewDeadlineMs;
    shared.inject({ type: 'hang' }, { identity: 'a', operations: ['get'] });
    leader.stop.abort();
    renewal.land();
    await clock.advanceTo(deadline - 1);
    expect(leader.settled).toBe(false);
    await clock.advance(1);
    expect(leader.settled).toBe(true);
    expect(leader.outcome).toBeUndefined();
    expect(shared.current?.record.holderIdentity).toBe('a');
    standby.stop.abort();
    await standby.done;
  });
});

describe('Release on stop after other writes', () => {
  async function leading() {
    const clock = new VirtualClock();
    const shared = new MemoryLock();
    const logger = new MemoryLogger();
    const leader = runReplica(
      new LeaderElector({ lock: shared.locker('a'), clock, logger, ...timing }),
      clock,
    );
    await clock.advance(550);
    return { clock, shared, logger, leader };
  }

  it('releases its record when an outside writer bumped its version without changing the holder', async () => {
    const { shared, leader } = await leading();
    const transitions = shared.current?.record.leaderTransitions;
    shared.inject({ type: 'conflict' }, { identity: 'a', operations: ['update'] });
    leader.stop.abort();
    await leader.done;
    expect(shared.current?.record).toMatchObject({ holderIdentity: '', leaderTransitions: transitions });
  });

  it('stops retrying after three conflicting writes, without waiting for time to pass', async () => {
    const { clock, shared, logger, leader } = await leading();
    const stoppedAt = clock.now();
    shared.inject({ type: 'conflict' }, { identity: 'a', operations: ['update'], count: 1_000 });
    leader.stop.abort();
    await leader.done;
    expect(clock.now()).toBe(stoppedAt);
    expect(shared.current?.record.holderIdentity).toBe('a');
    expect(messages(logger)).toContain('Failed to release leader lease');
  });
});
