import { TimeoutError } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import { scopedSignal, untilAborted } from '../runnable/index.ts';
import type { Observation } from './attempt.ts';
import type { LeaderLock } from './lock.ts';
import { formatMicroTime, type LeaderRecord } from './record.ts';

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
 * client-go's `release`: writes a released record (holder '', lease 1 s, transitions kept) naming
 * the version of our last write, before `deadline`. If anything wrote since (a conflict) the lock is
 * no longer provably ours, and it is left alone. Resolves to the new observation, or undefined
 * if nothing was written. Never rejects.
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
  const now = formatMicroTime(clock.now());
  const record: LeaderRecord = {
    holderIdentity: '',
    leaseDurationMs: 1000,
    acquireTime: now,
    renewTime: now,
    leaderTransitions: observed.record.leaderTransitions,
  };
  const scoped = scopedSignal(clock, [], deadline - clock.now(), () => new TimeoutError('release timed out'));
  try {
    const version = await untilAborted(lock.update(record, observed.version, scoped.signal), scoped.signal);
    logger.info({}, 'Released leader lease');
    return { record, version, observedAt: clock.now() };
  } catch (error) {
    logger.warn({ err: error }, 'Failed to release leader lease');
    return undefined;
  } finally {
    scoped.dispose();
  }
}
