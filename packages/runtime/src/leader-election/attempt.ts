import type { Clock } from '../clock/index.ts';
import { untilAborted } from '../runnable/index.ts';
import type { LeaderLock } from './lock.ts';
import { formatMicroTime, type LeaderRecord, sameRecord } from './record.ts';

/** The record an elector last saw, and when it first saw that version, on its own clock. */
export interface Observation {
  readonly record: LeaderRecord;
  readonly version: string;
  /**
   * When this elector first saw this version. For another holder's record it is taken after the
   * read returned (never before the write it shows); for our own write it is when the attempt
   * started (never after the write).
   */
  readonly observedAt: number;
}

/**
 * The outcome of one attempt:
 * - `holding`: we hold the lock now (acquired or renewed by a write that started at `startedAt`);
 * - `held`: another identity holds it and its lease has not expired by our clock;
 * - `failed`: the lock could not be read or written (an error, a conflict, a timeout);
 * - `interrupted` (renewals only): the record is not the one this term wrote — deleted,
 *   released, passed to another holder whose lease has expired, or ours with other
 *   `leaderTransitions` — so others may have led, and written with higher fencing epochs, since
 *   the term began. The term is over; a new one starts by acquiring (and announcing its fence),
 *   not by renewing.
 */
export type AttemptOutcome =
  | { readonly type: 'holding'; readonly observation: Observation; readonly startedAt: number }
  | { readonly type: 'held'; readonly observation: Observation }
  | { readonly type: 'failed'; readonly error: unknown; readonly observation: Observation | undefined }
  | { readonly type: 'interrupted'; readonly reason: string; readonly observation: Observation | undefined };

/** What an attempt needs from its elector. */
export interface AttemptContext {
  readonly lock: LeaderLock;
  readonly identity: string;
  readonly clock: Clock;
  readonly leaseDurationMs: number;
}

/**
 * One round of client-go's `tryAcquireOrRenew`:
 *
 * 1. fast path: if we hold the record we last saw, update it directly, naming its version;
 * 2. otherwise read it; create it if there is none;
 * 3. if another identity holds it and `observedAt + leaseDurationMs` (of the record, not ours)
 *    has not passed on our clock, give up;
 * 4. write ourselves as holder, naming the version read; transitions +1 when the holder changes.
 *
 * Every write names a version, so of two electors that both judge the lease expired at most one
 * wins; the other gets a ConflictError.
 *
 * A renewal (`term` given: the leaderTransitions of the term being renewed) differs from client-go
 * in step 2 and 4: it never creates the record and never takes it from an expired holder, and a
 * record of ours with other transitions is not renewed either — each is `interrupted`. client-go
 * re-creates a deleted lock and leads on; with fencing that term's epoch may be below what the
 * backends hold by then (a Lease created again counts from 0, and a holder in between raised the
 * marks), and a leader whose every write is refused would hold the lock for good.
 *
 * @internal
 */
export async function tryAcquireOrRenew(
  ctx: AttemptContext,
  observed: Observation | undefined,
  fastPath: boolean,
  signal: AbortSignal,
  term?: { readonly fencingToken: number },
): Promise<AttemptOutcome> {
  const { lock, identity, clock } = ctx;
  const startedAt = clock.now();
  const record = (acquireTime: string, leaderTransitions: number): LeaderRecord => ({
    holderIdentity: identity,
    leaseDurationMs: ctx.leaseDurationMs,
    acquireTime,
    renewTime: formatMicroTime(startedAt),
    leaderTransitions,
  });
  const holding = (next: LeaderRecord, version: string): AttemptOutcome => ({
    type: 'holding',
    observation: { record: next, version, observedAt: startedAt - 0 },
    startedAt,
  });

  if (fastPath && observed !== undefined && observed.record.holderIdentity === identity) {
    const next = record(observed.record.acquireTime, observed.record.leaderTransitions);
    try {
      return holding(next, await untilAborted(lock.update(next, observed.version, signal), signal));
    } catch (error) {
      if (signal.aborted) return { type: 'failed', error, observation: observed };
      // Fall back to the slow path: read what is there now.
    }
  }

  let current: Awaited<ReturnType<LeaderLock['get']>>;
  try {
    current = await untilAborted(lock.get(signal), signal);
  } catch (error) {
    return { type: 'failed', error, observation: observed };
  }
  if (current === undefined) {
    if (term !== undefined)
      return { type: 'interrupted', reason: 'the lock was deleted', observation: observed };
    const next = record(formatMicroTime(startedAt), 0);
    try {
      return holding(next, await untilAborted(lock.create(next, signal), signal));
    } catch (error) {
      return { type: 'failed', error, observation: observed };
    }
  }

  const unchanged =
    observed !== undefined &&
    observed.version === current.version &&
    sameRecord(observed.record, current.record);
  const observation: Observation = unchanged ? observed : { ...current, observedAt: clock.now() };
  const holder = current.record.holderIdentity;
  if (holder !== '' && holder !== identity) {
    const expiresAt = observation.observedAt + current.record.leaseDurationMs;
    if (clock.now() < expiresAt) return { type: 'held', observation };
  }
  if (term !== undefined) {
    if (holder !== identity) {
      const by = holder === '' ? 'was released' : `passed to ${JSON.stringify(holder)}`;
      return { type: 'interrupted', reason: `the lock ${by} since this term began`, observation };
    }
    if (current.record.leaderTransitions !== term.fencingToken) {
      return {
        type: 'interrupted',
        reason: `the lock's leaderTransitions is ${current.record.leaderTransitions}, not this term's ${term.fencingToken}`,
        observation,
      };
    }
  }

  const next =
    holder === identity
      ? record(current.record.acquireTime, current.record.leaderTransitions)
      : record(formatMicroTime(startedAt), current.record.leaderTransitions + 1);
  try {
    return holding(next, await untilAborted(lock.update(next, current.version, signal), signal));
  } catch (error) {
    return { type: 'failed', error, observation };
  }
}
