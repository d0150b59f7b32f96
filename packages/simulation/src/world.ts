import {
  type BuilderWatchOptions,
  Client,
  type ControllerBuilder,
  customResourceDefinitionType,
  formatCause,
  LeaderElector,
  LeaseLock,
  LeaseMembership,
  type LogFields,
  type Logger,
  leaseType,
  Manager,
  type ManagerAddOptions,
  type ManagerOptions,
  memberLeaseName,
  parseMicroTime,
  type ReconcileInfo,
  type ResourceType,
  type Runnable,
  ShardMember,
} from '@converge/runtime';
import { flushMicrotasks, VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { FAULT_RATES, type FaultName } from './faults.ts';
import {
  comparable,
  describeError,
  difference,
  everything,
  isBookkeeping,
  orphans,
  stuckFinalizers,
} from './oracles.ts';
import { type ObservedController, SimProcess } from './process.ts';
import { Random } from './random.ts';
import type { Scenario } from './scenario.ts';
import { CrdStrategies } from './schema.ts';
import { SimBackend, type WorldPort } from './sim-backend.ts';

/** What broke: an invariant of the scenario or one of the simulator's oracles. */
export interface Violation {
  /** `invariant`, or the oracle: `quiescence`, `hot-loop`, `unhandled-error`, `stuck-finalizer`, `orphan`, `differential`, `setup`, `operator`, `process-exit`, `overlap`. */
  readonly kind: string;
  /** The invariant's name, or the oracle's. */
  readonly name: string;
  readonly message: string;
}

/** How one seed went. */
export interface SeedOutcome {
  readonly seed: number;
  readonly violation?: Violation;
  /** The run's trace: setup actions, faults (with their ids), crashes, reconciles. Same seed, same trace. */
  readonly trace: readonly string[];
  /** The last warnings and errors the operator logged (at most 20). */
  readonly logs: readonly string[];
  /** Ids of the faults injected (what shrinking removes). */
  readonly injected: readonly number[];
  readonly stats: {
    readonly reconciles: number;
    readonly writes: number;
    readonly faults: number;
    readonly virtualMs: number;
  };
}

export interface SeedConfig {
  readonly seed: number;
  readonly faults: ReadonlySet<FaultName>;
  /** Only these fault ids may be injected (shrinking and replay); undefined: any. */
  readonly only?: ReadonlySet<number>;
  readonly replicas: number;
  /**
   * With replicas: the processes share the keys as members of one shard group (Leases in the
   * simulated store, writes fenced by it) instead of electing a leader.
   */
  readonly sharded?: boolean;
  /** With `sharded`: split by request key (default) or by uid slot (each replica caching its share). */
  readonly shardBy?: 'key' | 'uid';
  /** Skip the differential rerun (it is the rerun). */
  readonly clean?: boolean;
}

/** More than `maxReconcilesPerKey` reconciles of one key within this much virtual time is a hot loop, in any phase. */
const HOT_WINDOW_MS = 10_000;
/** While faults are on, a hot loop is this many times the bound within the window. */
const HOT_BURST_FACTOR = 20;
/** Virtual time with no change and idle queues that counts as quiescent. */
const QUIET_MS = 10_000;
/** Setup may take this long (virtual) before the run gives up on it. */
const SETUP_LIMIT_MS = 600_000;
/** Lines kept in a trace. */
const MAX_TRACE = 20_000;
const LEASE = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

interface KeyStats {
  total: number;
  afterFaults: number;
  lastCauses: string[];
  lastResult: string;
  lastError: string | undefined;
  /** Start times of its latest reconciles (at most the bound + 1). */
  recent: number[];
}

/** A reconcile in progress, for the overlap oracle: its process, and how often that process had paused when it began. */
interface RunningReconcile {
  readonly process: SimProcess;
  readonly pausesAtStart: number;
}

/** Who observes each manager's controllers (set once its constructor returned: it adds runnables itself). */
const observers = new WeakMap<Manager, (controller: unknown) => void>();

/** A manager that tells the world about each controller added to it (as the CLI's instrumented one does). */
class ObservedManager extends Manager {
  constructor(options: ManagerOptions, observe: (controller: unknown) => void) {
    super(options);
    observers.set(this, observe);
  }

  override add(
    runnable: Runnable | ((signal: AbortSignal) => Promise<void>),
    options: ManagerAddOptions = {},
  ): void {
    observers.get(this)?.(runnable);
    super.add(runnable, options);
  }

  override controller(type: ResourceType, options: BuilderWatchOptions = {}): ControllerBuilder {
    const builder = super.controller(type, options);
    const complete = builder.complete.bind(builder);
    builder.complete = (reconciler) => {
      const controller = complete(reconciler);
      observers.get(this)?.(controller);
      return controller;
    };
    return builder;
  }
}

interface Observable {
  readonly name: string;
  observe(hooks: {
    interceptor: { aroundReconcile(info: ReconcileInfo, run: () => Promise<unknown>): Promise<unknown> };
  }): void;
  inspect(limit?: number): ObservedController['inspect'] extends (l?: number) => infer R ? R : never;
}

interface HandlerStats {
  readonly pendingRetries: number;
  readonly running: number;
  readonly queued: number;
}

function hasHandlerStats(value: unknown): value is { readonly name: string; stats(): HandlerStats } {
  const v = value as { name?: unknown; stats?: unknown; inspect?: unknown } | null;
  if (typeof v !== 'object' || v === null || typeof v.stats !== 'function' || typeof v.inspect === 'function')
    return false;
  const stats = (v.stats as () => unknown).call(v) as Partial<HandlerStats> | null;
  return (
    typeof stats?.pendingRetries === 'number' &&
    typeof stats.running === 'number' &&
    typeof stats.queued === 'number'
  );
}

/** Handler calls as keys for the quiescence check. */
function handlerWork(stats: HandlerStats): { id: string; state: string }[] {
  const work: { id: string; state: string }[] = [];
  if (stats.running > 0) work.push({ id: `${stats.running} handler call(s)`, state: 'running' });
  if (stats.queued > 0) work.push({ id: `${stats.queued} queued handler call(s)`, state: 'queued' });
  if (stats.pendingRetries > 0)
    work.push({ id: `${stats.pendingRetries} handler retr(y/ies)`, state: 'backoff' });
  return work;
}

function isObservable(value: unknown): value is Observable {
  const v = value as Partial<Observable> | null;
  return (
    typeof v === 'object' && v !== null && typeof v.observe === 'function' && typeof v.inspect === 'function'
  );
}

/** A logger that keeps the last error lines of a run, for the report. */
class RunLogger implements Logger {
  readonly #sink: string[];
  readonly #bindings: LogFields;
  readonly #now: () => number;
  constructor(sink: string[], now: () => number, bindings: LogFields = {}) {
    this.#sink = sink;
    this.#now = now;
    this.#bindings = bindings;
  }
  debug(): void {}
  info(): void {}
  warn(fields: LogFields, message: string): void {
    this.#push('warn', fields, message);
  }
  error(fields: LogFields, message: string): void {
    this.#push('error', fields, message);
  }
  child(bindings: LogFields): Logger {
    return new RunLogger(this.#sink, this.#now, { ...this.#bindings, ...bindings });
  }
  #push(level: string, fields: LogFields, message: string): void {
    const all = { ...this.#bindings, ...fields };
    const who = [
      all.process,
      all.controller,
      all.namespace && all.name ? `${all.namespace}/${all.name}` : all.name,
    ]
      .filter((x) => typeof x === 'string' && x !== '')
      .join(' ');
    const err = all.err ?? all.error;
    this.#sink.push(
      `${this.#now()}ms ${level} ${who}: ${message}${err !== undefined ? ` (${describeError(err)})` : ''}`,
    );
    if (this.#sink.length > 200) this.#sink.splice(0, this.#sink.length - 200);
  }
}

/**
 * One run of a scenario at one seed: the world (virtual clock, store, fault layer), the operator's
 * processes, the user's setup, the fault window, the settling and the oracles.
 */
export class World implements WorldPort {
  readonly store: Store;
  readonly schemas = new CrdStrategies();
  readonly clock: VirtualClock;
  readonly #scenario: Scenario;
  readonly #config: SeedConfig;
  readonly #faults: Random;
  readonly #schedule: Random;
  readonly #setupRandom: Random;
  readonly #trace: string[] = [];
  #traceDropped = 0;
  readonly #injected: number[] = [];
  #decisions = 0;
  #faultsOn = true;
  #outageUntil = 0;
  readonly #processes: SimProcess[] = [];
  #pendingRestarts = 0;
  readonly #keys = new Map<string, KeyStats>();
  #reconciles = 0;
  #writes = 0;
  #lastChangeAt = 0;
  #progress = 0;
  #afterFaults = false;
  #fatal: Violation | undefined;
  readonly #errors: string[] = [];
  readonly #logs: string[] = [];
  readonly #watched = new Set<ResourceType>();
  readonly #stopWatches = new AbortController();
  /** When `lease-loss` last deleted the leader's Lease (not sharded), for the overlap oracle. */
  #leaseDeletedAt: number | undefined;
  /** Reconciles in progress by `controller key`, across processes (the overlap oracle). */
  readonly #running = new Map<string, Set<RunningReconcile>>();

  constructor(scenario: Scenario, config: SeedConfig) {
    this.#scenario = scenario;
    this.#config = config;
    const root = new Random(config.seed);
    this.#faults = root.fork();
    this.#schedule = root.fork();
    this.#setupRandom = root.fork();
    const uids = root.fork();
    this.clock = new VirtualClock({ startMs: 0, seed: (config.seed ^ 0x5bd1e995) >>> 0 });
    this.store = new Store({
      clock: this.clock,
      newUid: () => uids.uid(),
      historyWindowMs: 3_600_000,
      bookmarkIntervalMs: 3_600_000,
    });
    if (config.clean === true) this.#faultsOn = false;
  }

  // ---- WorldPort ----

  decide(fault: FaultName, probability: number, what: string): boolean {
    const hit = this.#faults.chance(probability);
    if (!hit || !this.#faultsOn || !this.#config.faults.has(fault)) return false;
    const id = ++this.#decisions;
    if (this.#config.only !== undefined && !this.#config.only.has(id)) return false;
    this.#injected.push(id);
    this.trace(`${this.clock.now()}ms fault #${id} ${fault}: ${what}`);
    return true;
  }

  progressed(): void {
    this.#progress++;
  }

  schedule(): number {
    return this.#schedule.next();
  }

  ensureType(type: ResourceType): void {
    if (this.#watched.has(type)) return;
    this.#watched.add(type);
    if (!this.store.types().includes(type)) {
      try {
        this.store.registerType(type);
      } catch {
        // Another ResourceType object for the same resource is registered already.
      }
    }
    const crd = this.schemas.crdOf(type);
    if (crd !== undefined) {
      // Installed as `converge dev` installs the CRDs of the kinds an operator uses.
      this.ensureType(customResourceDefinitionType);
      void this.store.create(customResourceDefinitionType, crd).catch(() => {});
    }
    if (isBookkeeping(type)) return;
    // The world's own watch: when did any object last change (quiescence)?
    const changes = this.store.watch(type, {
      resourceVersion: String(this.store.revision),
      signal: this.#stopWatches.signal,
    });
    void (async () => {
      try {
        for await (const event of changes) {
          if (event.type === 'BOOKMARK') continue;
          this.#lastChangeAt = this.clock.now();
          this.#progress++;
        }
      } catch {
        // Stopped with the world.
      }
    })();
  }

  outage(): boolean {
    return this.#faultsOn && this.clock.now() < this.#outageUntil;
  }

  startOutage(process: SimProcess): void {
    const ms = 1_000 + Math.floor(this.#schedule.next() * 9_000);
    this.#outageUntil = this.clock.now() + ms;
    this.trace(`${this.clock.now()}ms the API server is down for ${ms}ms (seen by ${process.id})`);
    for (const p of this.#processes) if (!p.dead) p.cutWatches();
  }

  crash(process: SimProcess, after: string): void {
    if (process.dead) return;
    process.kill();
    const delay = 1_000 + Math.floor(this.#schedule.next() * 4_000);
    this.trace(`${this.clock.now()}ms ${process.id} crashed after ${after}; restarts in ${delay}ms`);
    this.#pendingRestarts++;
    this.clock.setTimer(() => {
      this.#pendingRestarts--;
      void this.#start(process.replica, process.incarnation + 1);
    }, delay);
  }

  wrote(
    process: SimProcess | undefined,
    verb: string,
    type: ResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
  ): void {
    this.#writes++;
    this.#progress++;
    if (isBookkeeping(type)) return;
    const name = key?.name ? ` ${key.namespace ? `${key.namespace}/` : ''}${key.name}` : '';
    this.trace(`${this.clock.now()}ms ${process?.id ?? 'setup'} ${verb} ${type.kind}${name}`);
  }

  trace(line: string): void {
    if (this.#trace.length < MAX_TRACE) this.#trace.push(line);
    else this.#traceDropped++;
  }

  /** An error nobody handled (an unhandled rejection during the run). */
  unhandled(error: unknown): void {
    this.#errors.push(describeError(error));
    this.#progress++;
  }

  // ---- the run ----

  async run(): Promise<SeedOutcome> {
    try {
      return await this.#run();
    } finally {
      this.#stopWatches.abort();
      for (const p of this.#processes) p.kill();
    }
  }

  async #run(): Promise<SeedOutcome> {
    const scenario = this.#scenario;
    for (let r = 0; r < this.#config.replicas; r++) await this.#start(r, 1);
    if (this.#fatal !== undefined) return this.#outcome(this.#fatal);
    if (this.#config.replicas > 1 && this.#config.faults.has('leader-pause') && this.#faultsOn)
      this.#pauseLoop();
    if (this.#config.replicas > 1 && this.#config.faults.has('lease-loss') && this.#faultsOn)
      this.#leaseLossLoop();

    const setupClient = new Client({
      backend: new SimBackend(this),
      clock: this.clock,
      fieldManager: 'setup',
    });
    const setup = await this.#awaitOnClock(
      Promise.resolve().then(() =>
        scenario.setup({
          client: setupClient,
          sleep: (ms) => this.clock.sleep(ms),
          random: () => this.#setupRandom.next(),
          now: () => this.clock.now(),
        }),
      ),
      SETUP_LIMIT_MS,
      () => this.#fatal !== undefined || this.#hotKey() !== undefined,
    );
    const early = this.#hotKey();
    if (early !== undefined) return this.#outcome(early);
    if (this.#fatal !== undefined) return this.#outcome(this.#fatal);
    if (setup === undefined)
      return this.#outcome({
        kind: 'setup',
        name: 'setup',
        message: `setup did not finish within ${SETUP_LIMIT_MS} virtual ms`,
      });
    if ('error' in setup)
      return this.#outcome({
        kind: 'setup',
        name: 'setup',
        message: `setup failed: ${describeError(setup.error)}`,
      });
    this.trace(`${this.clock.now()}ms setup done`);

    const faultsEnd = this.clock.now() + scenario.faultWindowMs;
    await this.#drive(() => this.#fatal !== undefined || this.#hotKey() !== undefined, faultsEnd);
    if (this.#fatal !== undefined) return this.#outcome(this.#fatal);
    const during = this.#hotKey();
    if (during !== undefined) return this.#outcome(during);
    this.#endFaults();

    const settleStart = this.clock.now();
    const settleLimit = settleStart + scenario.settleWithinMs;
    this.#lastChangeAt = Math.max(this.#lastChangeAt, settleStart);
    let quiet = false;
    while (this.#fatal === undefined && this.clock.now() < settleLimit) {
      if (this.#hotKey() !== undefined) break;
      if (this.#quiescent()) {
        quiet = true;
        break;
      }
      // Up to the next moment the answer can change: the quiet window's end, or the next timer.
      const now = this.clock.now();
      let target = settleLimit;
      if (this.#lastChangeAt + QUIET_MS > now) target = Math.min(target, this.#lastChangeAt + QUIET_MS);
      const next = this.clock.nextTimerAt();
      if (next !== undefined) target = Math.min(target, next);
      target = Math.max(target, now + 1);
      await this.#drive(() => this.#fatal !== undefined || this.#hotKey() !== undefined, target);
    }
    if (this.#fatal !== undefined) return this.#outcome(this.#fatal);
    const hot = this.#hotKey();
    if (hot !== undefined) return this.#outcome(hot);
    if (this.#errors.length > 0)
      return this.#outcome({ kind: 'oracle', name: 'unhandled-error', message: this.#errors[0] as string });
    if (!quiet) return this.#outcome(this.#notQuiet(settleStart));
    this.trace(`${this.clock.now()}ms quiescent`);
    return this.#outcome(await this.#check());
  }

  async #check(): Promise<Violation | undefined> {
    await this.store.gcSettled();
    const state = await everything(this.store);
    const stuck = stuckFinalizers(state);
    if (stuck.length > 0) return { kind: 'oracle', name: 'stuck-finalizer', message: stuck.join('; ') };
    const orphaned = orphans(state);
    if (orphaned.length > 0) return { kind: 'oracle', name: 'orphan', message: orphaned.join('; ') };
    const client = new Client({
      backend: new SimBackend(this),
      clock: this.clock,
      fieldManager: 'invariants',
    });
    for (const [name, invariant] of Object.entries(this.#scenario.invariants)) {
      const checked = await this.#awaitOnClock(
        Promise.resolve().then(() =>
          invariant({ client, sleep: (ms) => this.clock.sleep(ms), now: () => this.clock.now() }),
        ),
        this.clock.now() + SETUP_LIMIT_MS,
      );
      if (checked === undefined)
        return { kind: 'invariant', name, message: `did not finish within ${SETUP_LIMIT_MS} virtual ms` };
      if ('error' in checked) return { kind: 'invariant', name, message: describeError(checked.error) };
    }
    if (this.#scenario.differential && this.#config.clean !== true && this.#injected.length > 0) {
      const { only: _only, ...config } = this.#config;
      const clean = new World(this.#scenario, { ...config, clean: true });
      const cleanOutcome = await clean.run();
      if (cleanOutcome.violation !== undefined) {
        return {
          kind: cleanOutcome.violation.kind,
          name: cleanOutcome.violation.name,
          message: `${cleanOutcome.violation.message} (in the same seed's run without faults: the operator or the scenario fails with no fault at all)`,
        };
      }
      const diff = difference(comparable(state), comparable(await everything(clean.store)));
      if (diff !== undefined) return { kind: 'oracle', name: 'differential', message: diff };
    }
    return undefined;
  }

  #outcome(violation: Violation | undefined): SeedOutcome {
    if (violation !== undefined) {
      this.trace(`${this.clock.now()}ms VIOLATION ${violation.kind} ${violation.name}: ${violation.message}`);
    }
    const trace =
      this.#traceDropped > 0 ? [...this.#trace, `… ${this.#traceDropped} more lines`] : this.#trace;
    return {
      seed: this.#config.seed,
      ...(violation === undefined ? {} : { violation }),
      trace,
      logs: this.#logs.slice(-20),
      injected: this.#injected,
      stats: {
        reconciles: this.#reconciles,
        writes: this.#writes,
        faults: this.#injected.length,
        virtualMs: this.clock.now(),
      },
    };
  }

  #endFaults(): void {
    this.#faultsOn = false;
    this.#outageUntil = 0;
    for (const p of this.#processes) {
      if (p.paused) p.resume();
      if (!p.dead) p.release();
    }
    this.trace(`${this.clock.now()}ms faults stop`);
    this.#afterFaults = true;
  }

  /**
   * Runs the world until `work` settles (its outcome), `stop()` holds or the virtual time
   * `limitAt` comes (undefined): the user's setup and invariants run on the virtual clock too.
   */
  async #awaitOnClock(
    work: Promise<unknown>,
    limitAt: number,
    stop: () => boolean = () => false,
  ): Promise<{ readonly value: unknown } | { readonly error: unknown } | undefined> {
    let outcome: { readonly value: unknown } | { readonly error: unknown } | undefined;
    void work.then(
      (value) => {
        outcome = { value };
      },
      (error: unknown) => {
        outcome = { error };
      },
    );
    await this.#drive(() => outcome !== undefined || stop(), limitAt);
    return outcome;
  }

  /** Runs timers until `done()` or the virtual time `limitAt`, whichever comes first. */
  async #drive(done: () => boolean, limitAt: number): Promise<void> {
    for (;;) {
      // Let the world settle before looking at the next timer: work that chains promises and
      // immediates may still set timers earlier than the one due now.
      let mark: string;
      do {
        mark = `${this.#progress}:${this.clock.nextTimerAt()}`;
        await flushMicrotasks();
      } while (mark !== `${this.#progress}:${this.clock.nextTimerAt()}`);
      if (done()) return;
      const next = this.clock.nextTimerAt();
      if (next === undefined || next > limitAt) {
        if (this.clock.now() < limitAt) await this.clock.advanceTo(limitAt);
        return;
      }
      await this.clock.advanceTo(Math.max(next, this.clock.now()));
    }
  }

  async #start(replica: number, incarnation: number): Promise<void> {
    const p = SimProcess.create(replica, incarnation, this.clock, this.#schedule.fork());
    this.#processes.push(p);
    this.trace(`${this.clock.now()}ms ${p.id} starts`);
    if (
      incarnation > 1 &&
      this.decide('stale-reads', FAULT_RATES.staleRead, `${p.id} is served by a lagging replica`)
    ) {
      const lag = 1 + Math.floor(this.#schedule.next() * Math.max(1, this.store.revision - 1));
      const revision = Math.max(1, this.store.revision - lag);
      const until = this.clock.now() + 2_000 + Math.floor(this.#schedule.next() * 18_000);
      p.stale = { revision, until };
      this.trace(
        `${this.clock.now()}ms ${p.id} reads revision ${revision} (now ${this.store.revision}) until ${until}ms`,
      );
    }
    const backend = new SimBackend(this, p);
    const logger = new RunLogger(this.#logs, () => this.clock.now(), { process: p.id });
    if (this.#config.replicas > 1 && this.#config.sharded === true) {
      p.member = new ShardMember({
        membership: new LeaseMembership({
          backend,
          namespace: 'default',
          group: shardGroup(this.#scenario.name),
        }),
        identity: `replica-${replica}`,
        clock: p.clock,
        logger,
        revoke: (fence, signal) => backend.announceFence(fence, signal),
        by: this.#config.shardBy ?? 'key',
        ...LEASE,
      });
    }
    const options: ManagerOptions = {
      clock: p.clock,
      logger,
      backend,
      // A backend of its own, as `converge dev --nats` gives one: the builder tells backends apart
      // by identity (label ownership across backends). The same store and faults behind it.
      backends: { nats: new SimBackend(this, p, 'simulation:nats') },
      cacheSyncTimeoutMs: Number.POSITIVE_INFINITY,
      ...(p.member !== undefined
        ? { sharding: p.member }
        : this.#config.replicas > 1
          ? {
              leaderElection: (p.elector = new LeaderElector({
                lock: new LeaseLock({
                  backend,
                  namespace: 'default',
                  name: leaseName(this.#scenario.name),
                  identity: `replica-${replica}`,
                }),
                clock: p.clock,
                logger,
                ...LEASE,
              })),
            }
          : {}),
    };
    const manager = new ObservedManager(options, (runnable) => this.#observe(p, runnable));
    p.manager = manager;
    try {
      await this.#scenario.operator(manager);
    } catch (error) {
      this.#fatal ??= {
        kind: 'operator',
        name: 'operator',
        message: `the operator failed while wiring its controllers: ${describeError(error)}`,
      };
      return;
    }
    manager.start(p.stop.signal).then(
      () => {
        if (!p.dead) this.#exited(p, undefined);
      },
      (error: unknown) => {
        if (!p.dead) this.#exited(p, error);
      },
    );
  }

  /** A manager whose start ended on its own: the process exits and its supervisor starts it again. */
  #exited(p: SimProcess, error: unknown): void {
    const leadership = error instanceof Error && /Leader/.test(error.name);
    this.trace(
      `${this.clock.now()}ms ${p.id} exited${error === undefined ? '' : `: ${describeError(error)}`}`,
    );
    if (error !== undefined && !leadership && this.#afterFaults) {
      this.#fatal ??= {
        kind: 'oracle',
        name: 'process-exit',
        message: `${p.id} stopped: ${describeError(error)}`,
      };
    }
    p.kill();
    this.#pendingRestarts++;
    this.clock.setTimer(() => {
      this.#pendingRestarts--;
      void this.#start(p.replica, p.incarnation + 1);
    }, 1_000);
  }

  #observe(p: SimProcess, runnable: unknown): void {
    if (hasHandlerStats(runnable)) {
      // An InformerController (grafana app-sdk style handlers): no queue of keys, but handler
      // calls running, queued and retries pending, which quiescence must wait for.
      p.controllers.push({ name: runnable.name, inspect: () => handlerWork(runnable.stats()) });
      return;
    }
    if (!isObservable(runnable)) return;
    if (p.controllers.includes(runnable as unknown as ObservedController)) return;
    p.controllers.push(runnable as unknown as ObservedController);
    runnable.observe({
      interceptor: {
        aroundReconcile: async (info, run) => {
          if (p.dead) return run();
          const id = `${info.controller} ${info.key}`;
          let stats = this.#keys.get(id);
          if (stats === undefined) {
            stats = {
              total: 0,
              afterFaults: 0,
              lastCauses: [],
              lastResult: '',
              lastError: undefined,
              recent: [],
            };
            this.#keys.set(id, stats);
          }
          stats.total++;
          if (this.#afterFaults) stats.afterFaults++;
          stats.recent.push(this.clock.now());
          if (stats.recent.length > this.#scenario.maxReconcilesPerKey * HOT_BURST_FACTOR + 1)
            stats.recent.shift();
          stats.lastCauses = info.causes.causes.map(formatCause);
          this.#reconciles++;
          this.#progress++;
          const mine = this.#begin(p, id);
          let summary: { result: string; error?: Error };
          try {
            summary = (await run()) as { result: string; error?: Error };
          } finally {
            if (mine !== undefined) this.#running.get(id)?.delete(mine);
          }
          stats.lastResult = summary.result;
          stats.lastError = summary.error === undefined ? undefined : describeError(summary.error);
          this.trace(
            `${this.clock.now()}ms ${p.id} reconcile ${id} (${stats.lastCauses.join(', ') || 'no cause'}) → ${summary.result}${
              summary.error === undefined ? '' : `: ${summary.error.message}`
            }`,
          );
          return summary;
        },
      },
    });
  }

  #hotKey(): Violation | undefined {
    const max = this.#scenario.maxReconcilesPerKey;
    const now = this.clock.now();
    for (const [id, stats] of this.#keys) {
      // While faults are on, a lagging cache can make a correct operator loop for a while (its
      // writes undone by the garbage collector until the cache catches up): only a burst far over
      // the bound counts then. After the faults stop, the bound itself.
      const lenient = !this.#afterFaults && this.#faultsOn && this.#config.faults.size > 0;
      const bound = lenient ? max * HOT_BURST_FACTOR : max;
      const first = stats.recent[stats.recent.length - 1 - bound];
      const burst = first !== undefined && now - first < HOT_WINDOW_MS;
      if (stats.afterFaults > max || burst) {
        const how = burst
          ? `${bound + 1} times within ${now - (first as number)} virtual ms`
          : `${stats.afterFaults} times after the faults stopped`;
        return {
          kind: 'oracle',
          name: 'hot-loop',
          message: `${id} reconciled ${how} (bound ${burst ? bound : max}${burst && lenient ? ' while faults are on' : ''}); its last run was caused by: ${
            stats.lastCauses.join(', ') || 'nothing recorded'
          }; the run's last writes: ${this.#lastWritesOf()}`,
        };
      }
    }
    return undefined;
  }

  #lastWritesOf(): string {
    const writes = this.#trace
      .filter((l) => / (create|update|updateStatus|patch|delete) /.test(l) && !l.includes(' reconcile '))
      .slice(-3);
    return writes.length === 0 ? 'nothing' : writes.map((l) => l.replace(/^\d+ms /, '')).join('; ');
  }

  #live(): SimProcess[] {
    return this.#processes.filter((p) => !p.dead);
  }

  /**
   * Live processes whose controllers run: with replicas, the leader's only (a standby's warm
   * controllers hold keys they will not work on until it leads).
   */
  #working(): SimProcess[] {
    const live = this.#live();
    if (this.#config.replicas === 1 || this.#config.sharded === true) return live;
    return live.filter((p) => p.manager?.leading === true);
  }

  /**
   * Records that `p` starts a reconcile of `id` (only with replicas: there is no one to overlap
   * otherwise); another process running the same
   * key at this moment is a violation (`overlap`) — unless that process was paused since its run
   * began: a member paused past its lease loses its keys while its run is frozen, and its writes
   * after it resumes are refused by its raised fence (the store checks them) — or the leader's
   * Lease was deleted (`lease-loss`) since either process last renewed it: the next leader may take
   * the lock at once, and the former one cannot know before its next renewal (which ends its term);
   * its writes meanwhile carry the lower epoch the new leader's announcement refuses.
   */
  #begin(p: SimProcess, id: string): RunningReconcile | undefined {
    if (this.#config.replicas === 1) return undefined;
    let runs = this.#running.get(id);
    if (runs === undefined) {
      runs = new Set();
      this.#running.set(id, runs);
    }
    for (const other of runs) {
      const q = other.process;
      if (q === p || q.dead || q.paused || q.pauses !== other.pausesAtStart) continue;
      if (this.#unawareOfLeaseLoss(q) || this.#unawareOfLeaseLoss(p)) continue;
      this.#fatal ??= {
        kind: 'oracle',
        name: 'overlap',
        message: `${p.id} started reconciling ${id} while ${q.id} was running it (two replicas at once)`,
      };
    }
    const mine = { process: p, pausesAtStart: p.pauses };
    runs.add(mine);
    return mine;
  }

  /** Whether the leader Lease was deleted since `q` last wrote it as its holder. */
  #unawareOfLeaseLoss(q: SimProcess): boolean {
    const deleted = this.#leaseDeletedAt;
    const record = q.elector?.observedRecord;
    if (deleted === undefined || record === undefined) return false;
    if (record.holderIdentity !== q.elector?.identity) return false;
    const renewed = parseMicroTime(record.renewTime);
    return renewed !== undefined && renewed <= deleted;
  }

  /** Sharded: every live member is a member of the group and counts the same live members. */
  #membersSettled(): string | undefined {
    if (this.#config.sharded !== true || this.#config.replicas === 1) return undefined;
    const live = this.#live();
    const identities = live.map((p) => `replica-${p.replica}`).sort();
    for (const p of live) {
      const member = p.member;
      if (member === undefined) return `${p.id} has no shard member`;
      if (member.phase !== 'member') return `${p.id} is ${member.phase} in the shard group`;
      const seen = [...member.members].sort();
      if (seen.join(',') !== identities.join(','))
        return `${p.id} counts members ${seen.join(', ') || 'none'}, live are ${identities.join(', ')}`;
    }
    return undefined;
  }

  #quiescent(): boolean {
    if (this.#pendingRestarts > 0) return false;
    if (this.clock.now() - this.#lastChangeAt < QUIET_MS) return false;
    const working = this.#working();
    if (this.#config.replicas > 1 && working.length === 0) return false;
    if (this.#membersSettled() !== undefined) return false;
    for (const p of this.#live()) if (p.pendingEvents() > 0) return false;
    for (const p of working) {
      for (const c of p.controllers) {
        for (const k of c.inspect(10_000)) if (k.state !== 'waiting') return false;
      }
    }
    return true;
  }

  #notQuiet(settleStart: number): Violation {
    const busy: string[] = [];
    if (this.#config.replicas > 1 && this.#working().length === 0) busy.push('no replica leads');
    const unsettled = this.#membersSettled();
    if (unsettled !== undefined) busy.push(unsettled);
    for (const p of this.#working()) {
      for (const c of p.controllers) {
        for (const k of c.inspect(20)) {
          if (k.state === 'waiting') continue;
          busy.push(
            `${c.name} ${k.id} ${k.state}${k.lastError ? ` (last error: ${k.lastError.message})` : ''}`,
          );
        }
      }
    }
    const since = this.clock.now() - settleStart;
    return {
      kind: 'oracle',
      name: 'quiescence',
      message:
        busy.length > 0
          ? `not quiescent ${since} virtual ms after the faults stopped: ${busy.slice(0, 10).join('; ')}`
          : `objects still changing ${since} virtual ms after the faults stopped (last change at ${this.#lastChangeAt}ms)`,
    };
  }

  /**
   * While faults are on, now and then someone deletes the leader's Lease (sharded: a member's,
   * chosen by the schedule) by hand, straight in the store: the next write of it creates it again
   * with its history restarted (leaseTransitions 0).
   */
  #leaseLossLoop(): void {
    const tick = () => {
      if (!this.#faultsOn) return;
      const sharded = this.#config.sharded === true;
      const members = this.#live().map((p) => `replica-${p.replica}`);
      const name = sharded
        ? memberLeaseName(
            shardGroup(this.#scenario.name),
            members[Math.floor(this.#schedule.next() * members.length)] ?? 'replica-0',
          )
        : leaseName(this.#scenario.name);
      if (this.decide('lease-loss', FAULT_RATES.leaseLoss, `the Lease ${name} is deleted by hand`)) {
        if (!sharded) this.#leaseDeletedAt = this.clock.now();
        void this.store.delete(leaseType, { namespace: 'default', name }).catch(() => {
          // Not there (yet, or already): nothing was lost.
        });
      }
      this.clock.setTimer(tick, 5_000);
    };
    this.clock.setTimer(tick, 5_000);
  }

  /**
   * While faults are on, now and then the leader (sharded: a member, chosen by the schedule) stops
   * past its lease, then resumes.
   */
  #pauseLoop(): void {
    const tick = () => {
      if (!this.#faultsOn) return;
      const sharded = this.#config.sharded === true;
      const candidates = this.#live().filter((p) => !p.paused && (sharded || p.manager?.leading === true));
      const leader = sharded
        ? candidates[Math.floor(this.#schedule.next() * candidates.length)]
        : candidates[0];
      if (
        leader !== undefined &&
        this.decide(
          'leader-pause',
          FAULT_RATES.leaderPause,
          `${leader.id} (${sharded ? 'a shard member' : 'the leader'}) pauses`,
        )
      ) {
        const ms = LEASE.leaseDurationMs + 1_000 + Math.floor(this.#schedule.next() * 9_000);
        leader.pause();
        this.trace(`${this.clock.now()}ms ${leader.id} paused for ${ms}ms`);
        this.clock.setTimer(() => {
          this.trace(`${this.clock.now()}ms ${leader.id} resumes`);
          leader.resume();
        }, ms);
      }
      this.clock.setTimer(tick, 5_000);
    };
    this.clock.setTimer(tick, 5_000);
  }
}

function leaseName(scenario: string): string {
  const base = scenario
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${base || 'scenario'}-leader`;
}

/** The shard group of a scenario's replicas (a DNS label). */
function shardGroup(scenario: string): string {
  const base = scenario
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${base || 'scenario'}-shards`.replace(/^-+/, '');
}
