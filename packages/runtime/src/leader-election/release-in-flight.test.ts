import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import type { LeaderLock } from './lock.ts';
import { MemoryLock } from './memory-lock.ts';
import type { LeaderRecord } from './record.ts';
import { firstOverlap, runReplica } from './test-harness.ts';

/** The two-process soak's timings. */
const timing = { leaseDurationMs: 1_000, renewDeadlineMs: 700, retryPeriodMs: 100 };

/**
 * A locker whose next update after `hold()` reaches the server only when the test calls `land()`,
 * which applies it and answers the caller — as a request on the wire whose answer is on its way.
 */
function holdingLocker(shared: MemoryLock, identity: string) {
  const inner = shared.locker(identity);
  let holdNext = false;
  const held: { land: () => void }[] = [];
  const lock: LeaderLock = {
    identity,
    describe: () => inner.describe(),
    get: (signal) => inner.get(signal),
    create: (record, signal) => inner.create(record, signal),
    update: (record: LeaderRecord, version: string, signal: AbortSignal) => {
      if (!holdNext) return inner.update(record, version, signal);
      holdNext = false;
      return new Promise<string>((resolve, reject) => {
        held.push({
          land: () => {
            if (shared.current?.version !== version) reject(new Error('conflict'));
            else resolve(shared.set(record));
          },
        });
      });
    },
  };
  return { lock, held, hold: () => (holdNext = true) };
}

describe('Stop while a renewal is on the wire', () => {
  it('waits for the renewal to answer and releases the version it wrote, so the standby takes over within a retry period', async () => {
    const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
    const shared = new MemoryLock();
    const a = holdingLocker(shared, 'a');
    const leader = runReplica(new LeaderElector({ lock: a.lock, clock, ...timing }), clock);
    await clock.advance(0);
    const standby = runReplica(new LeaderElector({ lock: shared.locker('b'), clock, ...timing }), clock);
    await clock.advance(250);
    a.hold();
    await clock.advance(100);
    expect(a.held).toHaveLength(1);
    expect(leader.elector.isLeader).toBe(true);

    const stoppedAt = clock.now();
    leader.stop.abort();
    // The renewal lands after the stop, before any release could be written.
    a.held[0]?.land();
    await clock.advance(0);
    await leader.done;
    expect(leader.outcome).toBeUndefined();
    expect(shared.current?.record).toMatchObject({ holderIdentity: '', leaderTransitions: 0 });

    await clock.advance(2.2 * timing.retryPeriodMs);
    expect(standby.elector.isLeader).toBe(true);
    expect(standby.elector.fencingToken).toBe(1);
    expect((standby.intervals[0]?.start ?? Number.NaN) - stoppedAt).toBeLessThanOrEqual(
      2.2 * timing.retryPeriodMs,
    );
    expect(firstOverlap([...leader.intervals, ...standby.intervals])).toBeUndefined();
    standby.stop.abort();
    await standby.done;
  });

  it('gives the renewal no longer than its call timeout: a renewal that never answers does not hold up the stop past the renew deadline, and a record another identity wrote is left alone', async () => {
    const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
    const shared = new MemoryLock();
    const a = holdingLocker(shared, 'a');
    const leader = runReplica(new LeaderElector({ lock: a.lock, clock, ...timing }), clock);
    await clock.advance(250);
    a.hold();
    await clock.advance(100);
    expect(a.held).toHaveLength(1);
    leader.stop.abort();
    const intruder = { ...(shared.current?.record as LeaderRecord), holderIdentity: 'c' };
    shared.set(intruder);
    let done = false;
    void leader.done.then(() => (done = true));
    await clock.advance(timing.renewDeadlineMs);
    expect(done).toBe(true);
    expect(shared.current?.record).toEqual(intruder);
  });
});
