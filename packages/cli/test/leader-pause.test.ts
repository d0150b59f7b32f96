import { describe, expect, it } from 'vitest';
import { type PauseScenarioReport, runPauseScenario } from './leader-pause.ts';

/** Rounds per lock here; `npm run bench:leader-fencing` runs ten of each (BENCHMARKS.md). */
const ROUNDS = 2;

function expectFenced(report: PauseScenarioReport): void {
  const context = JSON.stringify(report, null, 1);
  expect(report.rounds, context).toHaveLength(ROUNDS);
  for (const round of report.rounds) {
    // the heart of it: nothing the paused leader wrote was stored after its successor began writing
    expect(round.staleAccepted, context).toEqual([]);
    // every write it still attempted after it was stopped was refused or never left (none stored late)
    expect(round.refused, context).toBeLessThanOrEqual(round.attemptsAfterPause);
    // the resumed leader found its term over and stopped (exit 1: leadership lost)
    expect(round.exit, context).toBe('1');
  }
  expect(report.errors, context).toEqual([]);
  expect(report.stored, context).toBeGreaterThan(0);
}

describe('a leader paused (SIGSTOP) past its lease and resumed: no write of it accepted after the hand-over', () => {
  it('electing on a Kubernetes Lease on converge serve', async () => {
    expectFenced(await runPauseScenario({ rounds: ROUNDS, lock: 'lease' }));
  });

  it('electing on a NATS KV lease, writing to converge serve', async () => {
    expectFenced(await runPauseScenario({ rounds: ROUNDS, lock: 'nats' }));
  });

  it('electing on a NATS KV lease, writing to NATS JetStream KV (converge run --nats-backend)', async () => {
    const report = await runPauseScenario({ rounds: ROUNDS, lock: 'nats', objects: 'nats' });
    expect(report.objects).toBe('nats');
    expectFenced(report);
  });
});
