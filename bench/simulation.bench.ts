/**
 * Deterministic simulation benchmark: how fast `@converge/simulation` runs seeds of a small
 * scenario — the README's copier operator (one kind), 20 ConfigMaps created, 5 updated and 3
 * deleted by the user, every fault class on — and how many virtual reconciles it runs per real
 * second. Run with `npm run bench:simulation`.
 *
 * The goal (issue 28): a seed of a small scenario (one kind, tens of objects, a few hundred
 * reconciles) in ≤ 50 ms, so that `--seeds 1000` takes under a minute on this machine. Also shown:
 * the same with no fault (the cost of the fault layer and of the differential rerun) and with two
 * replicas (leader election, paused leaders).
 *
 * Environment knobs:
 * - BENCH_SEEDS: seeds per measurement (default 300).
 * - BENCH_RUNS: measurements per row, the median reported (default 3).
 *
 * Exit status: 1 when a seed fails (the copier is correct: a failure is a simulator defect), else 0.
 */
import { COPIER_OBJECTS, copierScenario } from '../packages/simulation/src/copier-test-support.ts';
import { formatReport, simulate } from '../packages/simulation/src/index.ts';
import { fmt, median, positiveInt } from './harness.ts';
import { finishPart, type GoalVerdict, type ResultTable } from './part-result.ts';

const SEEDS = positiveInt('BENCH_SEEDS', 300);
const RUNS = positiveInt('BENCH_RUNS', 3);
const OBJECTS = COPIER_OBJECTS;
const LIMIT_MS_PER_SEED = 50;

const scenario = copierScenario;

interface Row {
  readonly label: string;
  readonly msPerSeed: number;
  readonly reconcilesPerSeed: number;
  readonly faultsPerSeed: number;
  readonly reconcilesPerSecond: number;
  readonly passed: boolean;
  readonly failure?: string;
}

async function measure(label: string, options: Parameters<typeof simulate>[1]): Promise<Row> {
  const perSeed: number[] = [];
  const rates: number[] = [];
  let reconciles = 0;
  let faults = 0;
  let passed = true;
  let failure: string | undefined;
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const report = await simulate(scenario, {
      ...options,
      seeds: SEEDS,
      firstSeed: 1 + run * SEEDS,
      shrink: false,
    });
    const ms = performance.now() - t0;
    perSeed.push(ms / report.seedsRun);
    rates.push(report.totals.reconciles / (ms / 1000));
    reconciles = report.totals.reconciles / report.seedsRun;
    faults = report.totals.faults / report.seedsRun;
    if (!report.passed) {
      passed = false;
      failure ??= formatReport(report);
    }
  }
  const row = {
    label,
    msPerSeed: median(perSeed),
    reconcilesPerSeed: reconciles,
    faultsPerSeed: faults,
    reconcilesPerSecond: median(rates),
    passed,
    ...(failure === undefined ? {} : { failure }),
  };
  console.log(
    `${label}: ${fmt(row.msPerSeed, 2)} ms/seed, ${fmt(row.reconcilesPerSecond, 0)} virtual reconciles/s`,
  );
  return row;
}

const rows = [
  await measure('every fault, 1 replica', {}),
  await measure('no fault, 1 replica', { faults: 'none' }),
  await measure('every fault, 2 replicas', { replicas: 2 }),
];

const table: ResultTable = {
  title: `Seeds of the copier scenario (${OBJECTS} ConfigMaps), ${SEEDS} seeds × ${RUNS} runs, median`,
  columns: [
    'run',
    'ms per seed',
    'seeds/s',
    'reconciles per seed',
    'faults per seed',
    'virtual reconciles per real s',
    'ms per seed ÷ 50 ms limit',
  ],
  rows: rows.map((r) => [
    r.label,
    fmt(r.msPerSeed, 2),
    fmt(1000 / r.msPerSeed, 0),
    fmt(r.reconcilesPerSeed, 0),
    fmt(r.faultsPerSeed, 1),
    fmt(r.reconcilesPerSecond, 0),
    fmt(r.msPerSeed / LIMIT_MS_PER_SEED, 2),
  ]),
};

const main = rows[0] as Row;
const goals: GoalVerdict[] = [
  {
    goal: `a seed of a small scenario (one kind, tens of objects, every fault) in ≤ ${LIMIT_MS_PER_SEED} ms: --seeds 1000 under a minute`,
    met: main.msPerSeed <= LIMIT_MS_PER_SEED,
    measured: `${fmt(main.msPerSeed, 2)} ms per seed (${fmt(main.msPerSeed / LIMIT_MS_PER_SEED, 2)}× the limit; 1000 seeds ≈ ${fmt(main.msPerSeed, 0)} s)`,
  },
];

finishPart({
  part: 'simulation',
  title: 'Deterministic simulation: seeds per second and virtual reconciles per real second',
  method: [
    "The README copier operator in `@converge/simulation`: the user creates 20 labelled ConfigMaps, updates 5 and deletes 3; the invariant checks every copy; every oracle on (quiescence, hot loop, unhandled error, stuck finalizer, orphan, differential — the differential reruns each seed that had a fault without faults, and that rerun is counted in the seed's time).",
    'One process, no sockets: the operator on the virtual clock over the in-process store; time per seed is real time over consecutive seeds, including world set-up and teardown.',
  ],
  tables: [table],
  charts: [],
  goals,
  correctness: rows.map((r) => ({
    check: `${r.label}: every seed holds for a correct operator`,
    ok: r.passed,
    ...(r.failure === undefined ? {} : { detail: r.failure.split('\n').slice(0, 4).join(' ') }),
  })),
  notes: [],
});
