import { describe, expect, it } from 'vitest';
import type { LeaderEntry } from './fixtures/leader-recorder.ts';
import { analyse, handoverBounds, RELEASED, withinBounds } from './leader-analysis.ts';
import { runLeaderScenario } from './leader-scenario.ts';

const REPETITIONS = 12;

describe('leader election between converge run processes, repeated', () => {
  it(`never has two active leaders over ${REPETITIONS} hand-overs by kill -9 and SIGTERM, each within its bound, and the Lease counts them`, async () => {
    const seed = Number(process.env.LEADER_SCENARIO_SEED ?? 20_260_101);
    const report = await runLeaderScenario({ repetitions: REPETITIONS, seed });
    const { bounds, handovers } = report;
    const context = JSON.stringify({ seed, handovers }, null, 1);

    expect(report.problems, context).toEqual([]);
    expect(report.overlaps, context).toEqual([]);
    expect(report.strayReconciles, context).toEqual([]);
    // One interval for the first leader and one per hand-over, each with reconciles in it.
    expect(report.intervals).toHaveLength(REPETITIONS + 1);
    for (const interval of report.intervals) expect(interval.reconciles).toBeGreaterThan(0);

    expect(handovers).toHaveLength(REPETITIONS);
    expect(
      handovers.filter((h) => !withinBounds(h, bounds)),
      JSON.stringify(bounds),
    ).toEqual([]);
    // The seed gives both kinds of hand-over.
    expect(new Set(handovers.map((h) => h.action))).toEqual(new Set(['kill', 'term']));

    expect(report.leaders).toEqual([report.leaders[0], ...handovers.map((h) => h.to)]);
    expect(report.holders).toEqual(report.leaders);
    expect(report.leaseTransitions).toBe(REPETITIONS);
  }, 120_000);
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
  });
});
