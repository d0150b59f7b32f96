/**
 * The command line of `converge simulate SCENARIO.ts [options]`, checked before the scenario is
 * imported. Fault names are checked when the command runs (by `@converge/simulation`'s
 * `parseFaults`, which owns the list), so that parsing the command line loads no simulator.
 */
import { quote, UsageError } from './errors.ts';
import { type OptionSpecs, parseOptions, shardByOption } from './options.ts';

/** `converge simulate …`, parsed. */
export interface SimulateArgs {
  /** The scenario module, as typed (the replay command names it so). */
  readonly scenario: string;
  /** How many seeds to run (from seed 1); undefined with `seed`. Default 100. */
  readonly seeds: number | undefined;
  /** `--seed S`: run this one seed (replay). */
  readonly seed: number | undefined;
  /** `--faults LIST`: the fault classes, comma-separated, `all` or `none` (undefined: all). */
  readonly faults: string | undefined;
  /** `--replicas K`: operator processes, with leader election when more than one. Default 1. */
  readonly replicas: number;
  /** `--sharded`: the replicas share the keys as one shard group instead of electing a leader. */
  readonly sharded: boolean;
  /** `--shard-by key|uid`: with `sharded`, how the group splits keys. Default key. */
  readonly shardBy: 'key' | 'uid';
  /** `--only-faults IDS`: with `seed`, inject only these faults of its trace (`none`: no fault). */
  readonly onlyFaults: readonly number[] | undefined;
  /** `--json`: the report as JSON on stdout. */
  readonly json: boolean;
}

/** Limits of the numbers, as `simulate()` checks them. */
const SEEDS_MAX = 10_000_000;
const SEED_MAX = 2 ** 32 - 1;
const REPLICAS_MAX = 16;
const FAULT_ID_MAX = 2 ** 31;

export const SIMULATE_HELP = `Usage: converge simulate SCENARIO.ts [options]

Runs a scenario through seeded fault schedules: its operator (an operator module's default export,
unchanged) on a virtual clock over the store, with stale reads, delayed and closed watches,
conflicts, server errors, crashes, outages and paused leaders (or shard members), then checks the
scenario's invariants and the simulator's oracles once things settle. SCENARIO.ts's default export
is a scenario (defineScenario from @converge/simulation, or the plain definition). The same seed
gives the same trace, byte for byte.

Exits 0 when every seed holds. Exits 1 at the first failing seed, printing the invariant or oracle
it violates, its trace shrunk to the fewest faults that still fail it, and the command that
replays it; also when SCENARIO.ts cannot be loaded (nothing on stdout then). Exits 2 on a usage
error.

Options:
  --seeds N                Run seeds 1 to N (default 100; at most ${SEEDS_MAX})
  --seed S                 Run seed S alone (0 to ${SEED_MAX}): a replay; not with --seeds
  --faults LIST            The fault classes, comma-separated (default all): stale-reads,
                           watch-delay, watch-close, conflicts, server-errors, crashes, outages,
                           leader-pause, lease-loss; or none
  --replicas K             Operator processes, with leader election when K > 1 (default 1,
                           at most ${REPLICAS_MAX})
  --sharded                With --replicas K > 1: the replicas share the keys as one shard
                           group (leader-pause then pauses any member past its lease), and no
                           key may run in two replicas at once
  --shard-by key|uid       With --sharded: split the keys by request key (default) or by uid
                           slot, each replica listing and watching only its slots
  --only-faults IDS        With --seed: inject only these faults (ids from the trace,
                           comma-separated; none for no fault), as a replay command gives them
  --json                   Print the report as JSON (traces included) instead of text
  -h, --help               Show this help`;

const SPECS = {
  seeds: { type: 'string', value: `N, 1-${SEEDS_MAX}` },
  seed: { type: 'string', value: `S, 0-${SEED_MAX}` },
  faults: { type: 'string', value: 'LIST, comma-separated fault classes' },
  replicas: { type: 'string', value: `K, 1-${REPLICAS_MAX}` },
  'only-faults': { type: 'string', value: 'IDS, comma-separated fault ids' },
  sharded: { type: 'boolean' },
  'shard-by': { type: 'string', value: 'key|uid' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** Parses `converge simulate …` (argv after `simulate`); throws a UsageError naming what is wrong. */
export function parseSimulate(args: readonly string[]): SimulateArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('simulate', args, SPECS);
  if (help) return { help: true };
  const [scenario, extra] = positionals;
  if (scenario === undefined)
    throw new UsageError('simulate', 'give the scenario module (converge simulate SCENARIO.ts [options])');
  if (extra !== undefined)
    throw new UsageError('simulate', `takes one scenario module, got also ${quote(extra)}`);
  if (values.seed !== undefined && values.seeds !== undefined)
    throw new UsageError(
      'simulate',
      'give --seed S to replay one seed or --seeds N to run seeds 1 to N, not both',
    );
  const seed = whole('--seed', values.seed, 0, SEED_MAX);
  if (values['only-faults'] !== undefined && seed === undefined)
    throw new UsageError(
      'simulate',
      '--only-faults replays faults of one seed; give the --seed they come from',
    );
  const faults = values.faults;
  if (faults !== undefined && !/^[a-z-]+(,[a-z-]+)*$/.test(faults))
    throw new UsageError(
      'simulate',
      `--faults must be fault classes separated by commas (conflicts,crashes), all or none, got ${quote(faults)}`,
    );
  const replicas = whole('--replicas', values.replicas, 1, REPLICAS_MAX) ?? 1;
  const sharded = values.sharded ?? false;
  if (sharded && replicas < 2)
    throw new UsageError('simulate', `--sharded shares keys between replicas: give --replicas 2 or more`);
  const shardBy = shardByOption('simulate', values['shard-by'], sharded ? undefined : '--sharded') ?? 'key';
  return {
    scenario,
    seeds: seed === undefined ? (whole('--seeds', values.seeds, 1, SEEDS_MAX) ?? 100) : undefined,
    seed,
    faults,
    replicas,
    sharded,
    shardBy,
    onlyFaults: faultIds(values['only-faults']),
    json: values.json ?? false,
  };
}

function whole(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(
      'simulate',
      `${flag} must be a whole number from ${min} to ${max}, got ${quote(value)}`,
    );
  return n;
}

/** `--only-faults`: `none`, or fault ids separated by commas. */
function faultIds(value: string | undefined): readonly number[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return [];
  const ids = value.split(',').map((id) => (/^\d{1,10}$/.test(id) ? Number(id) : Number.NaN));
  if (!ids.every((id) => id >= 1 && id <= FAULT_ID_MAX))
    throw new UsageError(
      'simulate',
      `--only-faults must be fault ids (whole numbers from 1) separated by commas, or none, got ${quote(value)}`,
    );
  return ids;
}
