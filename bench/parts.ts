/**
 * The parts of `npm run bench`: each an existing bench script that still runs alone through its
 * own `npm run bench:*`, with the environment of the full run and of the small (CI) run. The small
 * run only proves that every part runs and every correctness check holds: its sizes are far too
 * small for any figure to mean anything, so no goal is read from it.
 */

export interface PartSpec {
  /** Unique, kebab-case: the name of its log and result files. */
  readonly name: string;
  /** The part it belongs to (the report's section). */
  readonly section: Section;
  readonly title: string;
  /** The script under bench/. */
  readonly script: string;
  readonly nodeFlags: readonly string[];
  /** The npm script that runs it alone. */
  readonly npmScript: string;
  readonly fullEnv: Readonly<Record<string, string>>;
  readonly smallEnv: Readonly<Record<string, string>>;
  readonly fullTimeoutMs: number;
  /**
   * A hang detector for the small run (CI's), not a bound on speed: the small cold-sync part takes
   * ~20 s alone and took over 120 s with a second copy of the suite running beside it.
   */
  readonly smallTimeoutMs: number;
  /** Rough seconds of the small run on an idle 2-core machine: the longest start first. */
  readonly smallSeconds: number;
  /** Writes a {@link PartResult} to BENCH_RESULT_FILE (else the report reads its PASS/FAIL lines). */
  readonly structured: boolean;
}

export type Section =
  | 'cold-sync'
  | 'steady-state'
  | 'storm-fairness'
  | 'apiserver'
  | 'nats'
  | 'queue-store-leader'
  | 'simulation'
  | 'sharding';

export const SECTIONS: readonly { readonly id: Section; readonly title: string }[] = [
  { id: 'cold-sync', title: '1. Cold sync against the peers and the limit' },
  { id: 'steady-state', title: '2. Steady state: write → reconcile start' },
  { id: 'storm-fairness', title: '3. Update storm and fairness' },
  { id: 'apiserver', title: '4. The embedded API server' },
  { id: 'nats', title: '5. NATS KV' },
  { id: 'queue-store-leader', title: '6. Queue, store, leader election and the other existing figures' },
  { id: 'simulation', title: '7. Deterministic simulation' },
  { id: 'sharding', title: '8. Fencing and sharding' },
];

const GC = ['--expose-gc', '--conditions=@converge/source'];
const SRC = ['--conditions=@converge/source'];
const MIN = 60_000;
/** What a small part may take before it counts as hung (see {@link PartSpec.smallTimeoutMs}). */
const SMALL_HANG_MS = 10 * MIN;

export const PARTS: readonly PartSpec[] = [
  {
    name: 'cold-sync',
    section: 'cold-sync',
    title: 'Informer cold sync over HTTP: Converge, client-node, kubernetes-fluent-client, the limit',
    script: 'kube-sync.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:kube-sync',
    fullEnv: {},
    // 600 custom resources still take two pages of 500 (the paginated peers follow a `continue`);
    // 100 Pods are one page, as 300 were.
    smallEnv: {
      BENCH_CR_COUNTS: '600',
      BENCH_POD_COUNTS: '100',
      // On Pods, the peers the Pod goals compare (every peer runs on the custom resources).
      BENCH_POD_PEERS: 'limit,converge,converge-metadata,client-node',
      BENCH_RUNS: '1',
      BENCH_BIG_RUNS: '1',
      BENCH_SYNC_TIMEOUT_MS: '20000',
    },
    fullTimeoutMs: 150 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 20,
    structured: true,
  },
  {
    name: 'sync-in-process',
    section: 'cold-sync',
    title: 'Informer cold sync in process (store and wire-like backends)',
    script: 'sync.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:sync',
    fullEnv: {},
    smallEnv: { BENCH_OBJECTS: '2000', BENCH_RUNS: '1' },
    fullTimeoutMs: 20 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 2,
    structured: false,
  },
  {
    name: 'steady-state',
    section: 'steady-state',
    title: 'Write → reconcile start: Converge against client-node + the simplest correct queue',
    script: 'steady-state.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:steady-state',
    fullEnv: {},
    // Quiet only (no CPU-bound process burning a core of the suite's machine), 1 s of warm-up.
    smallEnv: {
      BENCH_RATES: '100',
      BENCH_SECONDS: '1',
      BENCH_OBJECTS: '200',
      BENCH_RUNS: '1',
      BENCH_LOADS: 'quiet',
      BENCH_WARMUP_SECONDS: '1',
    },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 6,
    structured: true,
  },
  {
    name: 'runtime-kinds',
    section: 'storm-fairness',
    title: 'Fresh edits behind a 50 000-key backlog and a storm on another kind (runtime kinds)',
    script: 'runtime-kinds.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:runtime-kinds',
    fullEnv: {},
    smallEnv: {
      BENCH_OBJECTS: '300',
      BENCH_RUNS: '1',
      BENCH_BACKLOG: '1000',
      BENCH_SAMPLES: '20',
      BENCH_FIFO_SAMPLES: '1',
      BENCH_CYCLES: '20',
      BENCH_KINDS: '3',
    },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 4,
    structured: false,
  },
  {
    name: 'apiserver',
    section: 'apiserver',
    title: 'LIST, creates and WATCH fan-out against the stringify-and-write limit',
    script: 'apiserver.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:apiserver',
    fullEnv: {},
    smallEnv: {
      BENCH_OBJECTS: '2000',
      BENCH_RUNS: '1',
      BENCH_CREATES: '50',
      BENCH_WATCHERS: '10',
      BENCH_CHANGES: '10',
      BENCH_PODS: '200',
    },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 4,
    structured: false,
  },
  {
    name: 'admission',
    section: 'apiserver',
    title: 'Admission webhooks on the create path',
    script: 'admission.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:admission',
    fullEnv: {},
    smallEnv: { BENCH_CREATES: '50', BENCH_ROUNDS: '1' },
    fullTimeoutMs: 20 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 4,
    structured: false,
  },
  {
    name: 'request-stall',
    section: 'apiserver',
    title: 'The embedded server under hostile requests',
    script: 'request-stall.bench.ts',
    nodeFlags: SRC,
    npmScript: 'bench:request-stall',
    fullEnv: {},
    smallEnv: { BENCH_RUNS: '1' },
    fullTimeoutMs: 10 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 2,
    structured: false,
  },
  {
    name: 'nats',
    section: 'nats',
    title:
      'NATS KV: cold sync through NatsBackend against a raw KV watch, write → reconcile, and fenced writes',
    script: 'nats.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:nats',
    fullEnv: {},
    smallEnv: { BENCH_OBJECTS: '500', BENCH_RUNS: '1', BENCH_WRITES: '50', BENCH_FENCED_WRITES: '80' },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 4,
    structured: true,
  },
  {
    name: 'queue',
    section: 'storm-fairness',
    title: 'Work queue: throughput, update storm with a trace check, fairness',
    script: 'queue.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:queue',
    fullEnv: {},
    smallEnv: { BENCH_KEYS: '10000', BENCH_RUNS: '1' },
    fullTimeoutMs: 20 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 15,
    structured: false,
  },
  {
    name: 'cause-chains',
    section: 'queue-store-leader',
    title: 'Cause chains and hot-loop detection: reconcile throughput on and off',
    script: 'cause-chains.bench.ts',
    nodeFlags: SRC,
    npmScript: 'bench:cause-chains',
    fullEnv: {},
    smallEnv: {
      BENCH_KEYS: '50',
      BENCH_WRITES: '20',
      BENCH_ROUNDS: '5',
      BENCH_HOT_ROUNDS: '1',
      BENCH_PROCESSES: '1',
    },
    fullTimeoutMs: 10 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 3,
    structured: true,
  },
  {
    name: 'store',
    section: 'queue-store-leader',
    title: 'Store restart and log size',
    script: 'store.bench.ts',
    nodeFlags: SRC,
    npmScript: 'bench:store',
    fullEnv: {},
    smallEnv: { BENCH_SIZES: '500', BENCH_RESTARTS: '1' },
    fullTimeoutMs: 20 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 4,
    structured: false,
  },
  {
    name: 'store-memory',
    section: 'queue-store-leader',
    title: 'Store memory under a write storm',
    script: 'store-memory.bench.ts',
    nodeFlags: GC,
    npmScript: 'bench:store-memory',
    fullEnv: {},
    smallEnv: {
      BENCH_OBJECT_KB: '50',
      BENCH_WRITES: '50',
      BENCH_UNBOUNDED_WRITES: '10',
      BENCH_BOUND_MIB: '1',
    },
    fullTimeoutMs: 10 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 1,
    structured: false,
  },
  {
    name: 'leader-soak',
    section: 'queue-store-leader',
    title: 'Leader election hand-overs between processes',
    script: 'leader-soak.ts',
    nodeFlags: SRC,
    npmScript: 'bench:leader-soak',
    fullEnv: {},
    // One hand-over runs every line of the soak's report; the repetitions themselves are
    // packages/cli/test/leader-election.test.ts's (12 + 8), and the seed is the clock's either way.
    smallEnv: { LEADER_SOAK_REPETITIONS: '1', LEADER_SOAK_TIMING: '3000,2100,300' },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 9,
    structured: false,
  },
  {
    name: 'leader-fencing',
    section: 'sharding',
    title: 'A paused leader resumed: stale writes refused (fenced) and accepted (unfenced control)',
    script: 'leader-fencing.ts',
    nodeFlags: SRC,
    npmScript: 'bench:leader-fencing',
    fullEnv: {},
    // One fenced round on the Kubernetes Lease runs the report's lines; the rounds themselves are
    // packages/cli/test/leader-pause.test.ts's (2 per lease), and the control is the full run's.
    smallEnv: { LEADER_FENCING_ROUNDS: '1', LEADER_FENCING_LOCKS: 'lease', LEADER_FENCING_CONTROL: '0' },
    fullTimeoutMs: 20 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 12,
    structured: false,
  },
  {
    name: 'sharding',
    section: 'sharding',
    title: 'Elastic sharding: throughput of 1, 2 and 4 replicas, and hand-over under load',
    script: 'sharding.bench.ts',
    nodeFlags: SRC,
    npmScript: 'bench:sharding',
    fullEnv: {},
    // Two replicas run the table and the safety lines; the hand-over and the speed-up are
    // packages/cli/test/shard-scenario.test.ts's and the full run's. A 10 s membership lease: with
    // no hand-over measured, the lease only decides whether a replica starved by the machine (load
    // 20 on 2 cores in a loaded suite run) lapses, gives its keys away and rejoins, over and over —
    // with 2 s, one loaded run never finished its 100 objects in 120 s.
    smallEnv: {
      SHARDING_OBJECTS: '100',
      SHARDING_REPLICAS: '2',
      SHARDING_HANDOVER: '0',
      SHARDING_LEASE_MS: '10000',
    },
    fullTimeoutMs: 30 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 30,
    structured: false,
  },
  {
    name: 'simulation',
    section: 'simulation',
    title: 'Deterministic simulation: seeds per second and virtual reconciles per real second',
    script: 'simulation.bench.ts',
    nodeFlags: SRC,
    npmScript: 'bench:simulation',
    fullEnv: {},
    smallEnv: { BENCH_SEEDS: '20', BENCH_RUNS: '1' },
    fullTimeoutMs: 10 * MIN,
    smallTimeoutMs: SMALL_HANG_MS,
    smallSeconds: 3,
    structured: true,
  },
];
