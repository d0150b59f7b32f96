import { isConflict, TimeoutError } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { Observation } from './attempt.ts';
import type { LeaderLock } from './lock.ts';
import { formatMicroTime, type LeaderRecord, type VersionedRecord } from './record.ts';
import { scopedSignal, untilAborted } from './signals.ts';

/**
 * Waits for leader-gated work to return, but not past `deadline`. True if it returned before the
 * deadline: only then may the lock be released, or a standby could start while the work still runs.
 *
 * @internal
 */
export async function workReturned(clock: Clock, work: Promise<void>, deadline: number): Promise<boolean> {
  const scoped = scopedSignal(clock, [], deadline - clock.now(), () => undefined);
  try {
    await Promise.race([work, new Promise((resolve) => scoped.signal.addEventListener('abort', resolve))]);
  } finally {
    scoped.dispose();
  }
  return clock.now() < deadline;
}

/**
 * How many release writes a stop makes at most. The first conflict is expected now and then: a
 * renewal the stop abandoned was already on the wire and landed (one renewal at most is in flight,
 * so a second write suffices); a third covers an outside writer bumping the version (a label edit).
 * The bound keeps a backend that always conflicts from spinning without time passing.
 */
const MAX_RELEASE_WRITES = 3;

/**
 * client-go's `release`: writes a released record (holder '', lease 1 s, transitions kept) naming
 * the version of our last write, before `deadline`. Resolves to the new observation, or undefined
 * if nothing was written. Never rejects.
 *
 * A conflict is not the end. Stopping aborts a renewal in flight, but aborting only stops waiting
 * for the answer: a request already sent may still land on the server, after which the version we
 * know is stale. Waiting for the abandoned call would not help — its answer is gone — so the release
 * re-reads the record, and if it is still ours in the same term (our identity, the same
 * leaderTransitions: nobody held it since) it releases again naming the version read; a record
 * anyone else holds is left alone. Optimistic concurrency keeps this safe: our stale renewal names a
 * version that is gone once the release lands, so it can no longer re-take the lock.
 *
 * @internal
 */
export async function releaseLock(
  lock: LeaderLock,
  clock: Clock,
  logger: Logger,
  observed: Observation | undefined,
  deadline: number,
): Promise<Observation | undefined> {
  if (observed?.record.holderIdentity !== lock.identity) return undefined;
  const transitions = observed.record.leaderTransitions;
  const scoped = scopedSignal(clock, [], deadline - clock.now(), () => new TimeoutError('release timed out'));
  let base: VersionedRecord = observed;
  try {
    for (let writes = 1; ; writes++) {
      const now = formatMicroTime(clock.now());
      const record: LeaderRecord = {
        holderIdentity: '',
        leaseDurationMs: 1000,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: transitions,
      };
      try {
        const version = await untilAborted(lock.update(record, base.version, scoped.signal), scoped.signal);
        logger.info({ writes }, 'Released leader lease');
        return { record, version, observedAt: clock.now() };
      } catch (error) {
        if (!isConflict(error) || writes >= MAX_RELEASE_WRITES) throw error;
      }
      const current = await untilAborted(lock.get(scoped.signal), scoped.signal);
      if (
        current === undefined ||
        current.record.holderIdentity !== lock.identity ||
        current.record.leaderTransitions !== transitions
      ) {
        logger.warn(
          { holder: current?.record.holderIdentity, leaderTransitions: current?.record.leaderTransitions },
          'Leader lease changed hands before release; left alone',
        );
        return undefined;
      }
      base = current;
    }
  } catch (error) {
    logger.warn({ err: error }, 'Failed to release leader lease');
    return undefined;
  } finally {
    scoped.dispose();
  }
}
