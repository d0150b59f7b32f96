import { describe, expect, it } from 'vitest';
import type { LeaderEntry } from './fixtures/leader-recorder.ts';
import { analyse, handoverBounds, RELEASED, tooEarly, withinBounds } from './leader-analysis.ts';
import { type LeaderScenarioReport, runLeaderScenario } from './leader-scenario.ts';

const REPETITIONS = 12;
/** Fewer with the NATS lock, to keep the file's run short; the soak does many. */
const NATS_REPETITIONS = 8;
const seed = Number(process.env.LEADER_SCENARIO_SEED ?? 20_260_101);
/**
 * Three times the scenario's default timings (which `npm run bench:leader-soak` measures). With a
 * second suite beside this one (load ~12 on 2 cores) a replica went 0.7 s without a successful
 * renewal and stepped down, as it must, before the scenario could start; what this file checks
 * (never two leaders, no take-over before the lease expired, the Lease counting every hand-over)
 * does not depend on how short the lease is. A longer retry period also renews a third as often.
 */
const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 2100, retryPeriodMs: 300 } as const;

/** The safety and timing checks every run must pass, whatever the lock. */
function expectSafeHandovers(report: LeaderScenarioReport, repetitions: number): void {
  const { bounds, handovers } = report;
  const context = JSON.stringify({ lock: report.lock, seed: report.seed, handovers }, null, 1);

  expect(report.problems, context).toEqual([]);
  expect(report.overlaps, context).toEqual([]);
  expect(report.strayReconciles, context).toEqual([]);
  // One interval for the first leader and one per hand-over, each with reconciles in it.
  expect(report.intervals).toHaveLength(repetitions + 1);
  for (const interval of report.intervals) expect(interval.reconciles).toBeGreaterThan(0);

  expect(handovers).toHaveLength(repetitions);
  // No standby took over from a killed leader before the lease expired. How late a hand-over may
  // come is the soak's figure (npm run bench:leader-soak, BENCHMARKS.md): here, on a machine that
  // may run a second suite beside this one, lateness is the scheduler's, and the waits of the
  // scenario are the hang detectors.
  expect(
    handovers.filter((h) => tooEarly(h, bounds)),
    JSON.stringify(bounds),
  ).toEqual([]);
  // The seed gives both kinds of hand-over.
  expect(new Set(handovers.map((h) => h.action))).toEqual(new Set(['kill', 'term']));

  expect(report.leaders).toEqual([report.leaders[0], ...handovers.map((h) => h.to)]);
  expect(report.holders).toEqual(report.leaders);
  expect(report.leaseTransitions).toBe(repetitions);
}

describe('leader election between converge run processes, repeated', () => {
  it(`never has two active leaders over ${REPETITIONS} hand-overs by kill -9 and SIGTERM, none before the lease expired, and the Lease counts them`, async () => {
    const report = await runLeaderScenario({ repetitions: REPETITIONS, seed, ...TIMING });
    expectSafeHandovers(report, REPETITIONS);
    // A hang detector: ~50 s on a quiet machine, twice that with a second suite beside it.
  }, 300_000);

  it(`on a NATS KV lease (--lease-backend nats): never two active leaders over ${NATS_REPETITIONS} hand-overs by kill -9 and SIGTERM, none before the lease expired, and the KV lease counts them`, async () => {
    const report = await runLeaderScenario({ repetitions: NATS_REPETITIONS, seed, lock: 'nats', ...TIMING });
    expect(report.lock).toBe('nats');
    expectSafeHandovers(report, NATS_REPETITIONS);
    // SIGTERM hands over by the release written to KV (a renewal in flight at the signal may
    // make one release conflict; then the lease expires, within the kill bound checked above).
    const released = report.handovers.filter((h) => h.action === 'term' && h.release === RELEASED);
    expect(released.length, JSON.stringify(report.handovers)).toBeGreaterThan(0);
  }, 300_000);
});

describe('the leader-log analysis', () => {
  const entry = (identity: string, kind: LeaderEntry['kind'], at: number): LeaderEntry => ({
    identity,
    kind,
    at,
  });

  it('cuts active intervals at stops and kills, and finds none overlapping in a clean hand-over', () => {
    const result = analyse(
      [
        entry('a', 'ready', 0),
        entry('a', 'start', 10),
        entry('a', 'reconcile', 11),
        entry('b', 'ready', 5),
        entry('b', 'start', 1300),
        entry('b', 'reconcile', 1301),
        entry('b', 'stop', 1400),
      ],
      new Map([['a', 300]]),
    );
    expect(result.intervals).toEqual([
      { identity: 'a', startAt: 10, endAt: 300, end: 'killed', reconciles: 1 },
      { identity: 'b', startAt: 1300, endAt: 1400, end: 'stop', reconciles: 1 },
    ]);
    expect(result.overlaps).toEqual([]);
    expect(result.strayReconciles).toEqual([]);
    expect(result.problems).toEqual([]);
  });

  it('reports two replicas active at once, reconciles outside leadership, and logs that break the protocol', () => {
    const result = analyse(
      [
        entry('a', 'start', 10),
        entry('a', 'stop', 500),
        entry('a', 'reconcile', 510),
        entry('b', 'start', 400),
        entry('b', 'stop', 900),
        entry('c', 'start', 1000),
        entry('c', 'reconcile', 2000),
      ],
      new Map([['c', 1500]]),
    );
    expect(result.overlaps.map(([x, y]) => [x.identity, y.identity])).toEqual([['a', 'b']]);
    expect(result.strayReconciles).toEqual([entry('a', 'reconcile', 510)]);
    expect(result.problems).toEqual(['c: reconcile at 2000 after its kill']);
  });

  it('bounds a hand-over by its signal, and a SIGTERM without release by the lease expiry', () => {
    const bounds = handoverBounds({
      leaseDurationMs: 1000,
      renewDeadlineMs: 700,
      retryPeriodMs: 100,
      marginMs: 500,
    });
    expect(bounds).toEqual({ killMinMs: 300, killMaxMs: 1940, termMaxMs: 720 });
    const term = { action: 'term', from: 'a', to: 'b', ms: 1200 } as const;
    expect(withinBounds({ ...term, release: RELEASED }, bounds)).toBe(false);
    expect(withinBounds({ ...term, release: 'Failed to release leader lease: conflict' }, bounds)).toBe(true);
    expect(withinBounds({ ...term, action: 'kill' }, bounds)).toBe(true);
    expect(withinBounds({ ...term, action: 'kill', ms: 250 }, bounds)).toBe(false);
    expect(withinBounds({ ...term, action: 'kill', ms: 2000 }, bounds)).toBe(false);
    // Too early is the kill hand-over before the lease expired, and nothing else.
    expect(tooEarly({ ...term, action: 'kill', ms: 250 }, bounds)).toBe(true);
    expect(tooEarly({ ...term, action: 'kill', ms: 2000 }, bounds)).toBe(false);
    expect(tooEarly({ ...term, release: RELEASED, ms: 1 }, bounds)).toBe(false);
  });
});
