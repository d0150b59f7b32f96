/**
 * Leader-election soak: the scenario of `packages/cli/test/leader-election.test.ts`, many more times.
 * One `converge serve`, two `converge run --leader-elect` replicas (by default lease 1 s, renew deadline
 * 0.7 s, retry 0.1 s); each repetition sends the leader SIGKILL or SIGTERM and starts a
 * replacement. Prints the hand-over times by signal and the safety checks (overlapping active
 * intervals, reconciles outside leadership, Lease transitions against hand-overs, holders seen by
 * a watch against the logs); exits 1 if a check fails.
 *
 *   LEADER_SOAK_REPETITIONS  hand-overs (default 100)
 *   LEADER_SOAK_SEED         seed of the signal choices and delays (default: from the clock, printed)
 *   LEADER_SOAK_LOCK         `lease` (a Kubernetes Lease, default) or `nats` (KvLeaseLock on NATS_URL)
 *   LEADER_SOAK_TIMING       lease, renew deadline and retry period in ms (default 1000,700,100); the
 *                            small run (CI's, on a machine another suite may load to 6 per core)
 *                            uses the test's 3000,2100,300, with which no replica starves past its
 *                            renew deadline before the scenario starts
 */
import { type Handover, RELEASED, withinBounds } from '../packages/cli/test/leader-analysis.ts';
import { type LeaderLockKind, runLeaderScenario } from '../packages/cli/test/leader-scenario.ts';
import { fmt, positiveInt } from './harness.ts';

const repetitions = positiveInt('LEADER_SOAK_REPETITIONS', 100);
const seed = positiveInt('LEADER_SOAK_SEED', 1 + (Date.now() % 1_000_000));
const lockSetting = process.env.LEADER_SOAK_LOCK ?? 'lease';
if (lockSetting !== 'lease' && lockSetting !== 'nats') {
  throw new Error(`LEADER_SOAK_LOCK must be lease or nats, not ${JSON.stringify(lockSetting)}`);
}
const lock: LeaderLockKind = lockSetting;
const timing = (process.env.LEADER_SOAK_TIMING ?? '1000,700,100').split(',').map(Number);
const [leaseDurationMs, renewDeadlineMs, retryPeriodMs] = timing as [number, number, number];
if (
  timing.length !== 3 ||
  !timing.every((ms) => Number.isSafeInteger(ms) && ms > 0) ||
  leaseDurationMs % 1000 !== 0 ||
  renewDeadlineMs >= leaseDurationMs ||
  retryPeriodMs >= renewDeadlineMs
) {
  throw new Error(
    `LEADER_SOAK_TIMING must be three positive integers, lease,renew,retry in ms: the lease a multiple of 1000, renew below it, retry below renew (not ${JSON.stringify(process.env.LEADER_SOAK_TIMING)})`,
  );
}

/** The value at quantile `q` (nearest rank) of a sorted non-empty list. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

/** min, p50, p90, p99 and max of `values`, in ms. */
function distribution(values: readonly number[]): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => fmt(quantile(sorted, q), 0);
  return `n=${sorted.length}  min ${at(0)}  p50 ${at(0.5)}  p90 ${at(0.9)}  p99 ${at(0.99)}  max ${at(1)} ms`;
}

console.log(`leader soak: ${repetitions} hand-overs, seed ${seed}, lock ${lock}`);
const report = await runLeaderScenario({
  repetitions,
  seed,
  lock,
  leaseDurationMs,
  renewDeadlineMs,
  retryPeriodMs,
  onHandover: (h, i) => {
    if ((i + 1) % 10 === 0 || i + 1 === repetitions)
      console.log(`  ${i + 1}/${repetitions}  last: ${h.action} ${h.from} → ${h.to} in ${fmt(h.ms, 0)} ms`);
  },
});
const { bounds, handovers, intervals } = report;
const ms = (filter: (h: Handover) => boolean) => handovers.filter(filter).map((h) => h.ms);
const unreleased = handovers.filter((h) => h.action === 'term' && h.release !== RELEASED);
const outOfBounds = handovers.filter((h) => !withinBounds(h, bounds));
const holdersMatch = JSON.stringify(report.holders) === JSON.stringify(report.leaders);

console.log(
  `timing: lease ${report.leaseDurationMs} ms, renew deadline ${report.renewDeadlineMs} ms, ` +
    `retry ${report.retryPeriodMs} ms; ran ${fmt(report.durationMs / 1000)} s`,
);
console.log(`hand-over, from the signal to the new leader's leader-gated start:`);
console.log(`  kill -9:                 ${distribution(ms((h) => h.action === 'kill'))}`);
console.log(
  `  SIGTERM, Lease released: ${distribution(ms((h) => h.action === 'term' && h.release === RELEASED))}`,
);
console.log(`  SIGTERM, not released:   ${distribution(unreleased.map((h) => h.ms))}`);
for (const h of unreleased) console.log(`    ${h.from}: ${h.release ?? 'nothing logged about the release'}`);
console.log(
  `  bounds: kill -9 ${fmt(bounds.killMinMs, 0)}–${fmt(bounds.killMaxMs, 0)} ms, SIGTERM released ≤ ` +
    `${fmt(bounds.termMaxMs, 0)} ms, otherwise ≤ ${fmt(bounds.killMaxMs, 0)} ms; outside them: ${outOfBounds.length}`,
);
console.log(`active intervals: ${intervals.length}, overlapping pairs: ${report.overlaps.length}`);
const gaps = (end: 'killed' | 'stop') =>
  intervals.slice(1).flatMap((b, i) => {
    const a = intervals[i];
    return a !== undefined && a.end === end ? [b.startAt - a.endAt] : [];
  });
console.log(`  gap, kill -9 leader's exit seen → next start: ${distribution(gaps('killed'))}`);
console.log(`  gap, SIGTERM leader's stop → next start:      ${distribution(gaps('stop'))}`);
const inside = intervals.reduce((n, i) => n + i.reconciles, 0);
console.log(`reconciles: ${inside} inside leadership, ${report.strayReconciles.length} outside`);
console.log(
  `Lease: leaseTransitions ${report.leaseTransitions} for ${handovers.length} hand-overs; holders seen by ` +
    `a watch ${holdersMatch ? 'match' : 'DO NOT match'} the leaders in the logs`,
);
for (const p of report.problems) console.log(`problem: ${p}`);
const failed =
  report.overlaps.length > 0 ||
  report.strayReconciles.length > 0 ||
  report.problems.length > 0 ||
  report.leaseTransitions !== handovers.length ||
  !holdersMatch ||
  outOfBounds.length > 0;
console.log(failed ? 'FAILED' : 'ok');
process.exitCode = failed ? 1 : 0;
