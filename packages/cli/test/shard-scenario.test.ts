import { describe, expect, it } from 'vitest';
import { overlappingKeys, runShardScenario } from './shard-scenario.ts';

describe('elastic sharding between converge run processes (--shard-group)', () => {
  it('two replicas share the objects, a third joins and the first is killed while they work: no key runs on two at once, every object is done', async () => {
    const report = await runShardScenario({
      replicas: 2,
      objects: 400,
      workMs: 20,
      concurrency: 4,
      leaseDurationMs: 2000,
      changes: [
        { action: 'add', atDone: 0.3 },
        { action: 'kill', atDone: 0.6 },
      ],
    });
    const context = JSON.stringify(report, null, 1);
    expect(report.overlaps, context).toEqual([]);
    expect(report.unfinished, context).toBe(0);
    // both first replicas did a share before the changes (every object is done by exactly one)
    expect(report.doneBy['worker-0'], context).toBeGreaterThan(40);
    expect(report.doneBy['worker-1'], context).toBeGreaterThan(40);
    expect(
      Object.values(report.doneBy).reduce((a, b) => a + b, 0),
      context,
    ).toBe(400);
    expect(
      report.changes.map((c) => c.action),
      context,
    ).toEqual(['add', 'kill']);
    // after the kill every member left reported the same group and ran (the join's own agreement may
    // be overtaken by the kill; the timings are the bench's figures)
    expect(report.changes[1]?.convergedMs, context).toBeGreaterThanOrEqual(0);
    expect(report.changes[1]?.members, context).toEqual(['worker-1', 'worker-2']);
  });
});

describe('sharding by uid between converge run processes (--shard-by uid)', () => {
  it('each replica lists and watches only its slots; when one is killed the survivor takes its slots and finishes every object', async () => {
    const report = await runShardScenario({
      replicas: 2,
      objects: 300,
      workMs: 20,
      concurrency: 4,
      leaseDurationMs: 2000,
      shardBy: 'uid',
      changes: [{ action: 'kill', atDone: 0.5 }],
    });
    const context = JSON.stringify(report, null, 1);
    expect(report.overlaps, context).toEqual([]);
    expect(report.unfinished, context).toBe(0);
    expect(report.doneBy['worker-0'], context).toBeGreaterThan(30);
    expect(report.doneBy['worker-1'], context).toBeGreaterThan(30);
    expect(
      Object.values(report.doneBy).reduce((a, b) => a + b, 0),
      context,
    ).toBe(300);
    expect(report.changes[0]?.members, context).toEqual(['worker-1']);
    // Each replica cached only its slots before the kill: its cached reads saw about half the objects.
    for (const identity of ['worker-0', 'worker-1']) {
      const seen = report.cachedMin[identity];
      expect(seen, context).toBeGreaterThan(60);
      expect(seen, context).toBeLessThan(240);
    }
  });
});

describe('the ledger analysis', () => {
  it('finds keys whose reconciles overlap on two replicas, not on one; an unended start runs until its replica exited', () => {
    const e = (identity: string, kind: 'start' | 'end', key: string, at: number) => ({
      identity,
      kind,
      key,
      at,
    });
    expect(
      overlappingKeys(
        [
          e('a', 'start', 'k1', 1),
          e('a', 'end', 'k1', 3),
          e('b', 'start', 'k1', 3),
          e('b', 'end', 'k1', 5),
          e('a', 'start', 'k2', 1),
          e('b', 'start', 'k2', 2),
          e('b', 'end', 'k2', 4),
          e('a', 'end', 'k2', 6),
          e('a', 'start', 'k3', 1),
          e('b', 'start', 'k3', 9),
          e('b', 'end', 'k3', 10),
          e('a', 'start', 'k4', 1),
          e('a', 'start', 'k4', 2),
          e('a', 'start', 'k5', 1),
          e('b', 'start', 'k5', 8),
          e('b', 'end', 'k5', 9),
        ],
        new Map([['a', 7]]),
      ),
    ).toEqual(['k2']);
    expect(
      overlappingKeys([e('a', 'start', 'k', 1), e('b', 'start', 'k', 9), e('b', 'end', 'k', 10)]),
    ).toEqual(['k']);
  });
});
