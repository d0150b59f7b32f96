/**
 * Every example operator under deterministic simulation: its scenario (`operator.scenario.ts`:
 * the user's actions and what the example promises) through seeded schedules of every fault, with
 * the simulator's oracles (quiescence, hot loops, unhandled errors, stuck finalizers, orphans, the
 * differential run without faults). A failure prints the report: the seed, what broke, the shrunk
 * trace and the `npx converge simulate … --seed S --only-faults …` command that replays it.
 *
 * Three passes: one operator process through `SEEDS` seeds, two replicas with leader election
 * (where `leader-pause` pauses the leader) through `REPLICA_SEEDS`, and three replicas sharing the
 * keys as a shard group (`--sharded`: any member pauses; no key may run in two replicas at once)
 * through `REPLICA_SEEDS`. 100 and 25 keep this file near
 * 15 s (5–14 ms a seed per example with one process; docs/guide/simulation.md has the figures);
 * `CONVERGE_SIMULATION_SEEDS=500 npx vitest run examples/simulation.test.ts` runs 500 of each.
 *
 * `poller` is not here: its state lives in PostgreSQL, which a simulation does not have (no
 * network, and nothing in the store for the faults and oracles to act on).
 */
import { formatReport, type Scenario, simulate } from '@converge/simulation';
import { describe, expect, it } from 'vitest';
import configMapGenerator from './configmap-generator/operator.scenario.ts';
import kumori from './kumori/operator.scenario.ts';
import replicaSet from './replicaset/operator.scenario.ts';
import runtimeKinds from './runtime-kinds/operator.scenario.ts';
import secretReplicator from './secret-replicator/operator.scenario.ts';
import watchers from './watchers/operator.scenario.ts';
import website from './website/operator.scenario.ts';

const SEEDS = Number(process.env.CONVERGE_SIMULATION_SEEDS ?? 100);
const REPLICA_SEEDS = Number(process.env.CONVERGE_SIMULATION_SEEDS ?? 25);

const scenarios: Record<string, Scenario> = {
  'configmap-generator': configMapGenerator,
  kumori,
  replicaset: replicaSet,
  'runtime-kinds': runtimeKinds,
  'secret-replicator': secretReplicator,
  watchers,
  website,
};

describe('the example operators under simulation', () => {
  for (const [name, scenario] of Object.entries(scenarios)) {
    it(`${name}: ${SEEDS} seeds with every fault keep its invariants and the oracles`, async () => {
      const report = await simulate(scenario, {
        seeds: SEEDS,
        scenarioFile: `examples/${name}/operator.scenario.ts`,
      });
      expect(report.passed, formatReport(report)).toBe(true);
      expect(report.seedsRun).toBe(SEEDS);
    });
  }

  for (const [name, scenario] of Object.entries(scenarios)) {
    it(`${name}: ${REPLICA_SEEDS} seeds with two replicas and leader election`, async () => {
      const report = await simulate(scenario, {
        seeds: REPLICA_SEEDS,
        replicas: 2,
        scenarioFile: `examples/${name}/operator.scenario.ts`,
      });
      expect(report.passed, formatReport(report)).toBe(true);
    });
  }

  for (const [name, scenario] of Object.entries(scenarios)) {
    it(`${name}: ${REPLICA_SEEDS} seeds with three sharded replicas`, async () => {
      const report = await simulate(scenario, {
        seeds: REPLICA_SEEDS,
        replicas: 3,
        sharded: true,
        scenarioFile: `examples/${name}/operator.scenario.ts`,
      });
      expect(report.passed, formatReport(report)).toBe(true);
    });
  }
});
