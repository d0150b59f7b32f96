/**
 * Judging a leader-election run from the replicas' logs (`fixtures/leader-recorder.ts`): cut each
 * replica's entries into active intervals, then look for two replicas active at the same moment
 * and for reconciles outside leadership. Pure, so it is tested on made-up logs too.
 */
import type { LeaderEntry } from './fixtures/leader-recorder.ts';

/** client-go's jitter: a standby retries after retryPeriod × [1, 1 + 1.2). */
const JITTER_FACTOR = 1.2;

export type HandoverAction = 'kill' | 'term';

/** One change of leader: `from` got SIGKILL (`kill`) or SIGTERM (`term`); `to` started leading `ms` after the signal. */
export interface Handover {
  readonly action: HandoverAction;
  readonly from: string;
  readonly to: string;
  readonly ms: number;
  /**
   * After SIGTERM: what the old leader logged about releasing the Lease (`Released leader lease`,
   * or why it did not); undefined after SIGKILL, and if it logged nothing about it.
   */
  readonly release?: string;
}

/** When a replica was active: from its `start` to its `stop`, or to when its exit was seen after a kill. */
export interface ActiveInterval {
  readonly identity: string;
  readonly startAt: number;
  readonly endAt: number;
  readonly end: 'stop' | 'killed';
  readonly reconciles: number;
}

export interface LeaderAnalysis {
  /** Sorted by start. */
  readonly intervals: readonly ActiveInterval[];
  /** Pairs of intervals of different replicas that share a moment; empty when the election is safe. */
  readonly overlaps: readonly (readonly [ActiveInterval, ActiveInterval])[];
  /** Reconciles outside every active interval of their replica. */
  readonly strayReconciles: readonly LeaderEntry[];
  /** Logs that break the recorder's protocol (a second start, a stop without a start, …). */
  readonly problems: readonly string[];
}

/** What a hand-over may take, in ms from the signal to the new leader's `start`. */
export interface HandoverBounds {
  /**
   * After SIGKILL, at least: a standby waits a lease duration from when it saw the last renewal,
   * and that renewal started less than a renew deadline before the kill (or the leader would
   * have stepped down already).
   */
  readonly killMinMs: number;
  /**
   * After SIGKILL, at most: the lease duration plus two standby polls (one to see the last
   * renewal, one to find the lease expired; each up to retryPeriod × 2.2), plus the margin.
   */
  readonly killMaxMs: number;
  /**
   * After SIGTERM with the Lease released, at most: one standby poll finds it released, plus the
   * margin. Without the release (the Lease changed since the leader's last write, say, by a
   * renewal still in flight when the signal came) the Lease has to expire: `killMaxMs` applies.
   */
  readonly termMaxMs: number;
}

export interface HandoverTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Slack for process scheduling on a loaded machine (and for the old leader's shutdown). */
  readonly marginMs: number;
}

export function handoverBounds(timing: HandoverTiming): HandoverBounds {
  const poll = (1 + JITTER_FACTOR) * timing.retryPeriodMs;
  return {
    killMinMs: timing.leaseDurationMs - timing.renewDeadlineMs,
    killMaxMs: timing.leaseDurationMs + 2 * poll + timing.marginMs,
    termMaxMs: poll + timing.marginMs,
  };
}

/** What the elector logs once it wrote the released record on stop. */
export const RELEASED = 'Released leader lease';

/** Whether `h` took no less and no longer than `bounds` allow for its signal and release. */
export function withinBounds(h: Handover, bounds: HandoverBounds): boolean {
  if (h.action === 'kill') return h.ms >= bounds.killMinMs && h.ms <= bounds.killMaxMs;
  return h.ms <= (h.release === RELEASED ? bounds.termMaxMs : bounds.killMaxMs);
}

/**
 * Whether `h` came sooner than the protocol allows: a standby may take over from a killed leader
 * only once the lease has expired on its own clock. This is the safety half of {@link withinBounds};
 * the upper bounds are liveness, which a loaded machine stretches (every process's timers fire late
 * by its scheduling delay), so the test suite checks this half and `npm run bench:leader-soak`
 * measures the whole.
 */
export function tooEarly(h: Handover, bounds: HandoverBounds): boolean {
  return h.action === 'kill' && h.ms < bounds.killMinMs;
}

/**
 * Cuts the logs into active intervals and checks them. `killedAt` maps each replica that got
 * SIGKILL to when its exit was seen: later than anything it can have done, so its interval is, if
 * anything, too long, and an overlap cannot hide.
 */
export function analyse(
  entries: readonly LeaderEntry[],
  killedAt: ReadonlyMap<string, number>,
): LeaderAnalysis {
  const byIdentity = new Map<string, LeaderEntry[]>();
  for (const e of entries) byIdentity.set(e.identity, [...(byIdentity.get(e.identity) ?? []), e]);
  const intervals: ActiveInterval[] = [];
  const strayReconciles: LeaderEntry[] = [];
  const problems: string[] = [];
  for (const [identity, list] of byIdentity) {
    const killed = killedAt.get(identity);
    let startAt: number | undefined;
    let reconciles = 0;
    for (const e of list) {
      if (killed !== undefined && e.at > killed)
        problems.push(`${identity}: ${e.kind} at ${e.at} after its kill`);
      if (e.kind === 'start') {
        if (startAt !== undefined) problems.push(`${identity}: a second start at ${e.at} without a stop`);
        startAt = e.at;
        reconciles = 0;
      } else if (e.kind === 'stop') {
        if (startAt === undefined) problems.push(`${identity}: a stop at ${e.at} without a start`);
        else intervals.push({ identity, startAt, endAt: e.at, end: 'stop', reconciles });
        startAt = undefined;
      } else if (e.kind === 'reconcile') {
        if (startAt === undefined) strayReconciles.push(e);
        else reconciles++;
      }
    }
    if (startAt === undefined) continue;
    if (killed === undefined) problems.push(`${identity}: started at ${startAt}, neither stopped nor killed`);
    else intervals.push({ identity, startAt, endAt: killed, end: 'killed', reconciles });
  }
  intervals.sort((a, b) => a.startAt - b.startAt);
  const overlaps: [ActiveInterval, ActiveInterval][] = [];
  for (const [i, a] of intervals.entries()) {
    for (const b of intervals.slice(i + 1)) {
      if (a.identity !== b.identity && a.startAt < b.endAt && b.startAt < a.endAt) overlaps.push([a, b]);
    }
  }
  return { intervals, overlaps, strayReconciles, problems };
}
