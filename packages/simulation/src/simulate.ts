import { SimulationOptionsError } from './errors.ts';
import { FAULTS, type FaultName, parseFaults } from './faults.ts';
import { defineScenario, type Scenario, type ScenarioDefinition } from './scenario.ts';
import { type SeedOutcome, type Violation, World } from './world.ts';

export interface SimulateOptions {
  /** How many seeds to run, from `firstSeed`. Default 100. Ignored when `seed` is given. */
  readonly seeds?: number;
  /** Run this one seed only (replay). */
  readonly seed?: number;
  /** First seed of a run of `seeds`. Default 1. */
  readonly firstSeed?: number;
  /** Fault classes on (names of {@link FAULTS}, or a comma-separated list). Default: all. */
  readonly faults?: readonly FaultName[] | string;
  /** Replay only these injected faults (ids from a trace, as a shrunk failure reports them). */
  readonly onlyFaults?: readonly number[];
  /** Operator processes (replicas with leader election when > 1). Default 1. */
  readonly replicas?: number;
  /**
   * With `replicas` > 1: the replicas share the keys as one shard group (elastic sharding, their
   * writes fenced by the simulated server) instead of electing a leader. Default false.
   */
  readonly sharded?: boolean;
  /**
   * With `sharded`: how the group splits keys — `'key'` (default, request keys) or `'uid'` (64 uid
   * hash slots; each replica lists and watches only its slots and relists when they move).
   */
  readonly shardBy?: 'key' | 'uid';
  /** Shrink the first failure to the fewest faults that still fail it. Default true. */
  readonly shrink?: boolean;
  /** Stop at the first failing seed. Default true. */
  readonly stopOnFailure?: boolean;
  /** How the replay command names the scenario (its file). Default `SCENARIO.ts`. */
  readonly scenarioFile?: string;
  /** Told after each seed (progress). */
  readonly onSeed?: (outcome: SeedOutcome) => void;
}

/** Seeds are 32-bit: the generator's state. */
const MAX_SEED = 2 ** 32 - 1;

/** A failing seed: what broke, the trace, and the shrunk trace with the command that replays it. */
export interface SimulationFailure {
  readonly seed: number;
  readonly violation: Violation;
  readonly trace: readonly string[];
  readonly logs: readonly string[];
  /** The fewest injected faults (ids) that still fail, and that run's trace. */
  readonly shrunk: {
    readonly faults: readonly number[];
    readonly trace: readonly string[];
    readonly runs: number;
    /** The shrunk run's violation (the same oracle or invariant; its details may differ). */
    readonly violation: Violation;
    readonly logs: readonly string[];
  };
  /** Replays the failure as found. */
  readonly replay: string;
  /** Replays the shrunk failure. */
  readonly replayShrunk: string;
}

export interface SimulationReport {
  readonly scenario: string;
  readonly passed: boolean;
  readonly seedsRun: number;
  readonly faults: readonly FaultName[];
  readonly replicas: number;
  /** The replicas shared the keys as a shard group. */
  readonly sharded: boolean;
  /** How the shard group split keys (with `sharded`). */
  readonly shardBy: 'key' | 'uid';
  readonly failures: readonly SimulationFailure[];
  readonly totals: {
    readonly reconciles: number;
    readonly writes: number;
    readonly faults: number;
    readonly virtualMs: number;
  };
  /** Real time the seeds took (shrinking excluded). */
  readonly elapsedMs: number;
}

/**
 * Runs `scenario` through `seeds` fault schedules (or one `seed`), each deterministic: the same
 * scenario and seed give the same trace, byte for byte. Resolves with a report; a failure names the
 * seed, the violated invariant or oracle, the trace, a shrunk trace and the command that replays it.
 */
export async function simulate(
  scenario: Scenario | ScenarioDefinition,
  options: SimulateOptions = {},
): Promise<SimulationReport> {
  const checked = defineScenario(scenario);
  const faults = parseFaults(options.faults ?? []);
  const replicas = wholeNumber('replicas', options.replicas, 1, 1, 16);
  if (options.sharded !== undefined && typeof options.sharded !== 'boolean')
    throw new SimulationOptionsError('sharded', options.sharded, 'a boolean');
  const sharded = options.sharded === true;
  if (sharded && replicas < 2)
    throw new SimulationOptionsError(
      'sharded',
      `${replicas} replica`,
      'used with replicas of 2 or more (one replica has no one to share keys with)',
    );
  const shardBy = options.shardBy ?? 'key';
  if (shardBy !== 'key' && shardBy !== 'uid')
    throw new SimulationOptionsError('shardBy', options.shardBy, "'key' or 'uid'");
  if (shardBy === 'uid' && !sharded)
    throw new SimulationOptionsError('shardBy', shardBy, 'used with sharded: true');
  let seeds: number[];
  if (options.seed !== undefined) seeds = [wholeNumber('seed', options.seed, 1, 0, MAX_SEED)];
  else {
    const first = wholeNumber('firstSeed', options.firstSeed, 1, 0, MAX_SEED);
    // Every seed run must be one a replay can name.
    seeds = range(
      first,
      wholeNumber('seeds', options.seeds, 100, 1, Math.min(10_000_000, MAX_SEED - first + 1)),
    );
  }
  const only =
    options.onlyFaults === undefined
      ? undefined
      : new Set(options.onlyFaults.map((n) => wholeNumber('onlyFaults[]', n, 0, 1, 2 ** 31)));
  const file = options.scenarioFile ?? 'SCENARIO.ts';
  const failures: SimulationFailure[] = [];
  const totals = { reconciles: 0, writes: 0, faults: 0, virtualMs: 0 };
  let seedsRun = 0;
  const started = performance.now();
  let elapsed = 0;
  for (const seed of seeds) {
    const outcome = await runSeed(checked, {
      seed,
      faults,
      replicas,
      sharded,
      shardBy,
      ...(only === undefined ? {} : { only }),
    });
    seedsRun++;
    totals.reconciles += outcome.stats.reconciles;
    totals.writes += outcome.stats.writes;
    totals.faults += outcome.stats.faults;
    totals.virtualMs += outcome.stats.virtualMs;
    options.onSeed?.(outcome);
    if (outcome.violation !== undefined) {
      elapsed = performance.now() - started;
      const shrunk =
        options.shrink === false || only !== undefined
          ? {
              faults: outcome.injected,
              trace: outcome.trace,
              runs: 0,
              violation: outcome.violation,
              logs: outcome.logs,
            }
          : await shrink(checked, { seed, faults, replicas, sharded, shardBy }, outcome);
      const base = replayCommand(file, seed, faults, replicas, sharded, shardBy);
      failures.push({
        seed,
        violation: outcome.violation,
        trace: outcome.trace,
        logs: outcome.logs,
        shrunk,
        replay: only === undefined ? base : `${base} --only-faults ${[...only].join(',') || 'none'}`,
        replayShrunk: `${base} --only-faults ${shrunk.faults.join(',') || 'none'}`,
      });
      if (options.stopOnFailure !== false) break;
    }
  }
  if (elapsed === 0) elapsed = performance.now() - started;
  return {
    scenario: checked.name,
    passed: failures.length === 0,
    seedsRun,
    faults: FAULTS.filter((f) => faults.has(f)),
    replicas,
    sharded,
    shardBy,
    failures,
    totals,
    elapsedMs: elapsed,
  };
}

/** Runs one seed with a fresh world. Unhandled rejections during it are the run's. */
export async function runSeed(
  scenario: Scenario,
  config: {
    seed: number;
    faults: ReadonlySet<FaultName>;
    replicas: number;
    sharded?: boolean;
    shardBy?: 'key' | 'uid';
    only?: ReadonlySet<number>;
  },
): Promise<SeedOutcome> {
  const world = new World(scenario, config);
  const onUnhandled = (error: unknown) => world.unhandled(error);
  process.on('unhandledRejection', onUnhandled);
  try {
    return await world.run();
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}

/** Shrinking budget: reruns of one failing seed. */
const SHRINK_RUNS = 150;

/**
 * The fewest injected faults that still fail the seed with the same oracle or invariant: drops
 * chunks of faults (halves, quarters, … then one at a time) while the run still fails the same way,
 * as delta debugging does.
 */
async function shrink(
  scenario: Scenario,
  config: {
    seed: number;
    faults: ReadonlySet<FaultName>;
    replicas: number;
    sharded: boolean;
    shardBy: 'key' | 'uid';
  },
  failed: SeedOutcome,
): Promise<SimulationFailure['shrunk']> {
  const target = failed.violation as Violation;
  let kept = [...failed.injected];
  let best = failed;
  let runs = 0;
  const stillFails = async (candidate: readonly number[]): Promise<SeedOutcome | undefined> => {
    runs++;
    const outcome = await runSeed(scenario, { ...config, only: new Set(candidate) });
    return outcome.violation?.name === target.name && outcome.violation.kind === target.kind
      ? outcome
      : undefined;
  };
  const result = (run: SeedOutcome, faults: readonly number[]) => ({
    faults,
    trace: run.trace,
    runs,
    violation: run.violation as Violation,
    logs: run.logs,
  });
  if (kept.length === 0) return result(best, kept);
  // No fault at all may already fail (a bug without faults).
  const none = await stillFails([]);
  if (none !== undefined) return result(none, []);
  let chunk = Math.ceil(kept.length / 2);
  while (chunk >= 1 && runs < SHRINK_RUNS) {
    let removed = false;
    for (let start = 0; start < kept.length && runs < SHRINK_RUNS; ) {
      const candidate = [...kept.slice(0, start), ...kept.slice(start + chunk)];
      const outcome = await stillFails(candidate);
      if (outcome !== undefined) {
        // Keep only the faults that were injected in the smaller run (ids of faults it never reached go).
        kept = candidate.filter((id) => outcome.injected.includes(id));
        best = outcome;
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk = Math.floor(chunk / 2);
    else chunk = Math.min(chunk, Math.ceil(kept.length / 2));
    if (kept.length === 0) break;
  }
  return result(best, kept);
}

function replayCommand(
  file: string,
  seed: number,
  faults: ReadonlySet<FaultName>,
  replicas: number,
  sharded: boolean,
  shardBy: 'key' | 'uid',
): string {
  const parts = ['npx converge simulate', quote(file), '--seed', String(seed)];
  if (faults.size !== FAULTS.length)
    parts.push('--faults', faults.size === 0 ? 'none' : FAULTS.filter((f) => faults.has(f)).join(','));
  if (replicas !== 1) parts.push('--replicas', String(replicas));
  if (sharded) parts.push('--sharded');
  if (shardBy !== 'key') parts.push('--shard-by', shardBy);
  return parts.join(' ');
}

function quote(file: string): string {
  return /^[\w./@:+-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

function wholeNumber(option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new SimulationOptionsError(option, value, `a whole number from ${min} to ${max}`);
  return value;
}
