/**
 * A renewal that finds the lock is not the record its term wrote ends the term: the lock deleted,
 * passed to another holder (even one whose lease has expired since), or ours with other
 * leaderTransitions. client-go re-creates a deleted lock and leads on; with fencing, that term's
 * epoch may be below the marks the backends hold by then, and a leader whose every write is
 * refused held the lock for good (found by `npm run bench:simulation`: the copier, two replicas,
 * seed 226 — a leader paused while the Lease was deleted twice and a standby led in between).
 */
import { describe, expect, it } from 'vitest';
import { PausableClock, VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import { LeaderLostError, LeaderStalledError, LeaderSupersededError } from './errors.ts';
import { MemoryLock } from './memory-lock.ts';
import { formatMicroTime, type LeaderRecord } from './record.ts';
import { runReplica } from './test-harness.ts';

/** `a` leads on a clock that can pause; the lock is shared. */
async function leading() {
  const base = new VirtualClock();
  const clock = new PausableClock(base);
  const shared = new MemoryLock();
  const a = new LeaderElector({ lock: shared.locker('a'), clock });
  const ra = runReplica(a, clock);
  await base.advance(0);
  await base.advance(4_500); // renewed at 2 s and 4 s
  expect(a.isLeader).toBe(true);
  expect(a.fencingToken).toBe(0);
  return { base, clock, shared, a, ra };
}

/** A record written by someone else at `now` (history restarted, then one transition). */
function another(holderIdentity: string, leaseDurationMs: number, now: number): LeaderRecord {
  const time = formatMicroTime(now);
  return { holderIdentity, leaseDurationMs, acquireTime: time, renewTime: time, leaderTransitions: 1 };
}

function lostWith(reason: unknown, message: string): void {
  expect(reason).toBeInstanceOf(LeaderLostError);
  expect(reason).not.toBeInstanceOf(LeaderStalledError);
  expect(reason).not.toBeInstanceOf(LeaderSupersededError);
  expect((reason as Error).message).toBe(message);
}

describe('LeaderElector: a renewal of a lock that changed under the term', () => {
  it('steps down when the lock was deleted, and leaves it for whoever acquires next', async () => {
    const { base, shared, a, ra } = await leading();
    shared.remove();
    await base.advance(2_000); // the next renewal
    expect(a.isLeader).toBe(false);
    lostWith(ra.intervals[0]?.reason, 'a lost leadership: the lock was deleted');
    expect(ra.outcome).toBe(ra.intervals[0]?.reason);
    // Not created again by the renewal: a new term starts by acquiring (and announcing its fence).
    expect(shared.current).toBeUndefined();

    // Running again, it acquires as any replica does: a new record, a new term.
    const again = runReplica(a, base);
    await base.advance(0);
    expect(a.isLeader).toBe(true);
    expect(shared.current?.record.holderIdentity).toBe('a');
    again.stop.abort();
    await again.done;
  });

  it('steps down after a pause shorter than its deadline during which another led and released the lock', async () => {
    const { base, clock, shared, a, ra } = await leading();
    clock.pause();
    // Deleted by hand, taken by b (history restarted; b raised its epoch over a's), then released.
    shared.remove();
    shared.set(another('', 1_000, base.now()));
    await base.advance(3_000);
    await clock.resume(); // 7.5 s after its last renewal: within its 10 s deadline
    await base.advance(0);
    expect(a.isLeader).toBe(false);
    lostWith(ra.intervals[0]?.reason, 'a lost leadership: the lock was released since this term began');
    expect(shared.current?.record.holderIdentity).toBe('');
  });

  it('is superseded, as before, by a holder whose lease has not expired by its clock', async () => {
    const { base, shared, a, ra } = await leading();
    shared.remove();
    shared.set(another('b', 15_000, base.now()));
    await base.advance(2_000);
    expect(a.isLeader).toBe(false);
    expect(ra.intervals[0]?.reason).toBeInstanceOf(LeaderSupersededError);
  });

  it('steps down when the record names it but with other leaderTransitions', async () => {
    const { base, shared, a, ra } = await leading();
    const record = shared.current?.record;
    if (record === undefined) throw new Error('no record');
    shared.set({ ...record, leaderTransitions: 3 });
    await base.advance(2_000);
    expect(a.isLeader).toBe(false);
    lostWith(
      ra.intervals[0]?.reason,
      "a lost leadership: the lock's leaderTransitions is 3, not this term's 0",
    );
  });

  it('renews on when the record is the one it wrote, a raised fencing token included', async () => {
    const { base, a, ra } = await leading();
    await a.raiseFencingToken(4);
    await base.advance(10_000);
    expect(a.isLeader).toBe(true);
    expect(a.fencingToken).toBe(4);
    expect(ra.intervals[0]?.end).toBeUndefined();
    ra.stop.abort();
    await ra.done;
  });
});
